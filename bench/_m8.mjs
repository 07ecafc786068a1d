import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
const swaps = process.argv.slice(2).map(s => s.split('='));
const plugin = { name: 'swap', setup(b) { b.onLoad({ filter: /\.ts$/ }, (args) => { for (const [p, alt] of swaps) if (args.path.endsWith(p)) return { contents: readFileSync(alt,'utf8'), loader: 'ts', resolveDir: args.path.replace(/\/[^/]*$/, '') }; return undefined; }); } };
const r = await build({ entryPoints: ['src/index.ts'], bundle: true, splitting: false, minify: true, format: 'esm', platform: 'neutral', mainFields: ['module','main'], write: false, logLevel: 'error', plugins: [plugin] });
console.log(gzipSync(r.outputFiles[0].contents,{level:9}).length);
