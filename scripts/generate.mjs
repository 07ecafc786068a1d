// `npm run generate`: writes src/internal/validate/envelope-validators.generated.ts (see scripts/envelope-validators.ts)
// and src/cli/field-docs.generated.ts (see scripts/field-docs.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { fieldDocsSource } from './field-docs.ts';

// The generator imports the endpoint table from src/ (TypeScript): esbuild makes it, with zod, one
// module to run.
const { outputFiles } = await build({
  entryPoints: [new URL('./envelope-validators.ts', import.meta.url).pathname],
  bundle: true,
  format: 'esm',
  platform: 'node',
  write: false,
  logLevel: 'warning',
});
const dir = mkdtempSync(join(tmpdir(), 'crm-generate-'));
const generator = join(dir, 'generator.mjs');
writeFileSync(generator, outputFiles[0].text);
let envelopeValidatorsSource;
try {
  ({ envelopeValidatorsSource } = await import(pathToFileURL(generator).href));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const target = new URL('../src/internal/validate/envelope-validators.generated.ts', import.meta.url);
writeFileSync(target, envelopeValidatorsSource());
process.stdout.write(`wrote ${target.pathname}\n`);
const docs = new URL('../src/cli/field-docs.generated.ts', import.meta.url);
writeFileSync(docs, fieldDocsSource());
process.stdout.write(`wrote ${docs.pathname}\n`);
