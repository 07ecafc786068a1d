// Part of `npm run build`, after tsup. The testing entry's declarations import msw's RequestHandler
// (the type of `fake.handlers`, which msw's setupServer and setupWorker require), but msw is an
// optional peer dependency. Under `skipLibCheck: false` that import fails without msw installed,
// and in a CommonJS project it is TS1479 (msw is ESM-only), although its types still resolve.
// `@ts-ignore` keeps both projects compiling, as Vite does for its optional peers; without msw,
// `handlers` is then untyped, and createFakeCrm() throws anyway. tsup drops comments, hence this step.
import { readFileSync, writeFileSync } from 'node:fs';

const mswImport = /^import \{ RequestHandler \} from 'msw';$/m;
for (const file of ['dist/testing.d.ts', 'dist/testing.d.cts']) {
  const text = readFileSync(file, 'utf8');
  const found = text.match(new RegExp(mswImport, 'gm')) ?? [];
  // Any other reference to msw would fail the same way: stop the build rather than ship it.
  const references = text.split('\n').filter((line) => /['"]msw[/'"]/.test(line) && !/^\s*(\*|\/)/.test(line));
  if (found.length !== 1 || references.length !== 1) {
    throw new Error(`${file}: expected exactly one import of msw, of RequestHandler; found ${references.length}`);
  }
  writeFileSync(
    file,
    text.replace(
      mswImport,
      (line) =>
        `// @ts-ignore msw is an optional peer dependency, and ESM-only, which a CommonJS project refuses here\n${line}`,
    ),
  );
}
