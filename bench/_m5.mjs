import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
const stubs = process.argv.slice(2);
const plugin = { name: 'stub', setup(b) { b.onLoad({ filter: /\.ts$/ }, async (args) => { for (const s of stubs) if (args.path.endsWith(s)) { const src = (await import('node:fs')).readFileSync(args.path, 'utf8'); const names = [...src.matchAll(/export (?:const|function|class|let) (\w+)/g)].map(m=>m[1]); return { contents: names.map(n=>`export const ${n} = globalThis.x${n};`).join('\n'), loader: 'ts' }; } return undefined; }); } };
const r = await build({ entryPoints: ['src/index.ts'], bundle: true, splitting: false, minify: true, format: 'esm', platform: 'neutral', mainFields: ['module','main'], write: false, logLevel: 'silent', plugins: [plugin] });
console.log(stubs.join(' ') || 'none', gzipSync(r.outputFiles[0].contents,{level:9}).length);
