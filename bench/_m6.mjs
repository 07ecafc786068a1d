import { build } from 'esbuild';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
const alt = process.argv[2];
const plugin = { name: 'swap', setup(b) { b.onLoad({ filter: /envelope-validators\.generated\.ts$/ }, () => alt ? ({ contents: readFileSync(alt,'utf8'), loader: 'ts' }) : undefined); } };
const r = await build({ entryPoints: ['src/index.ts'], bundle: true, splitting: false, minify: true, format: 'esm', platform: 'neutral', mainFields: ['module','main'], write: false, logLevel: 'silent', plugins: [plugin] });
console.log(gzipSync(r.outputFiles[0].contents,{level:9}).length);
