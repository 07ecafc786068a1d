// The import rules of src/ (`npm run deps`, part of `npm run check`): no cycles, and the layers of
// src/internal/README.md. Each rule is named for the line it stops at; its comment, printed with
// the violation, says what is allowed instead. Paths are relative to the package's root.

/** What every layer may import: the public types and the schemas. */
const SHARED = ['^src/core/', '^src/schemas/'];
/** The public option types, a file of its own. */
const OPTIONS = '^src/options\\.ts$';
/** The steps of the request engine: each may use the call and the endpoint, never another step. */
const STEPS = 'retry|exchange|waiting|report|tracing|validate|hatches';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle (type-only imports count): the modules on it cannot be understood, loaded or split one without the other. Move what both need into a lower layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file: the other rules cannot judge it.',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'core-imports-only-core-and-schemas',
      severity: 'error',
      comment:
        'src/core/ (the public types: errors, CrmPromise, Page, logger and trace types) may import only src/core/ and src/schemas/.',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: SHARED },
    },
    {
      name: 'schemas-import-only-schemas',
      severity: 'error',
      comment: 'src/schemas/ may import only src/schemas/.',
      from: { path: '^src/schemas/' },
      to: { path: '^src/', pathNot: '^src/schemas/' },
    },
    {
      name: 'options-imports-only-core-and-schemas',
      severity: 'error',
      comment: 'src/options.ts (the public option types) may import only src/core/ and src/schemas/.',
      from: { path: OPTIONS },
      to: { path: '^src/', pathNot: SHARED },
    },
    {
      name: 'endpoint-is-a-leaf',
      severity: 'error',
      comment:
        'src/internal/endpoint/ (the endpoint row, paths, input checks) is a leaf of the engine: it may import only itself, src/core/ and src/schemas/.',
      from: { path: '^src/internal/endpoint/' },
      to: { path: '^src/', pathNot: ['^src/internal/endpoint/', ...SHARED] },
    },
    {
      name: 'call-imports-only-endpoint-core-schemas-options',
      severity: 'error',
      comment:
        'src/internal/call/ (the call as data, its failures) may import only itself, src/internal/endpoint/, src/core/, src/schemas/ and src/options.ts.',
      from: { path: '^src/internal/call/' },
      to: { path: '^src/', pathNot: ['^src/internal/(call|endpoint)/', ...SHARED, OPTIONS] },
    },
    {
      name: 'step-imports-another-step',
      severity: 'error',
      comment: `The steps (src/internal/{${STEPS.replaceAll('|', ',')}}/) never import one another: what two steps share belongs in src/internal/call/ or src/internal/endpoint/, and src/internal/request/ puts the steps together.`,
      from: { path: `^src/internal/(${STEPS})/` },
      to: { path: `^src/internal/(${STEPS})/`, pathNot: '^src/internal/$1/' },
    },
    {
      name: 'step-imports-the-pipeline',
      severity: 'error',
      comment:
        'A step never imports src/internal/request/ (the pipeline: scope, settings, prepare, send): the pipeline calls the steps, not the other way round.',
      from: { path: `^src/internal/(${STEPS})/` },
      to: { path: '^src/internal/request/' },
    },
    {
      name: 'step-imports-outside-its-layers',
      severity: 'error',
      comment:
        'A step may import only its own folder, src/internal/call/, src/internal/endpoint/, src/core/, src/schemas/ and src/options.ts.',
      from: { path: `^src/internal/(${STEPS})/` },
      to: {
        path: '^src/',
        // Other steps, the pipeline and files directly in src/internal/ have rules of their own.
        pathNot: [`^src/internal/(${STEPS}|request|call|endpoint)/`, '^src/internal/[^/]+$', ...SHARED, OPTIONS],
      },
    },
    {
      name: 'internal-imports-the-public-surface',
      severity: 'error',
      comment:
        'src/internal/ may import from the rest of src/ only src/core/, src/schemas/ and src/options.ts: never src/endpoints.ts, src/client.ts, src/index.ts, src/resources/, src/cli/, src/testing/ or src/otel/, which are built on it.',
      from: { path: '^src/internal/' },
      to: { path: '^src/', pathNot: ['^src/internal/', ...SHARED, OPTIONS] },
    },
    {
      name: 'cli-is-an-entry',
      severity: 'error',
      comment: 'src/cli/ is an entry (the crm bin): nothing outside it imports it.',
      from: { pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'testing-is-an-entry',
      severity: 'error',
      comment:
        "src/testing/ is an entry ('crm-integration-sdk/testing', the crm-fake bin): nothing outside it imports it.",
      from: { pathNot: '^src/testing/' },
      to: { path: '^src/testing/' },
    },
    {
      name: 'otel-is-an-entry',
      severity: 'error',
      comment: "src/otel/ is an entry ('crm-integration-sdk/otel'): nothing outside it imports it.",
      from: { pathNot: '^src/otel/' },
      to: { path: '^src/otel/' },
    },
    {
      name: 'redis-is-an-entry',
      severity: 'error',
      comment:
        "src/redis/ is an entry ('crm-integration-sdk/redis': the shared pace, its stores): nothing outside it imports it, so that the main entry does not grow by it.",
      from: { pathNot: '^src/redis/' },
      to: { path: '^src/redis/' },
    },
    {
      name: 'sync-is-an-entry',
      severity: 'error',
      comment:
        "src/sync/ is an entry ('crm-integration-sdk/sync': the sync engine, its journals): nothing outside it imports it, so that the main entry does not grow by it. The crm command (src/cli/, a bundle of its own) runs it for `crm sync`.",
      from: { pathNot: ['^src/(sync|postgres)/', '^src/cli/'] },
      to: { path: '^src/sync/' },
    },
    {
      name: 'postgres-takes-only-the-journal-of-sync',
      severity: 'error',
      comment:
        "src/postgres/ ('crm-integration-sdk/postgres') takes from src/sync/ only the journal's interface and its error, which its build imports from the sync entry (tsup.config.ts): anything else of src/sync/ would be a copy in its bundle.",
      from: { path: '^src/postgres/' },
      to: { path: '^src/sync/', pathNot: '^src/sync/journal(-error)?\\.ts$' },
    },
    {
      name: 'postgres-is-an-entry',
      severity: 'error',
      comment:
        "src/postgres/ is an entry ('crm-integration-sdk/postgres': the fleet's sync journal): nothing outside it imports it statically, so that no other entry grows by it. The CLI's --postgres loads it on demand (a dynamic import), so its folder is a chunk of its own, loaded only then.",
      from: { pathNot: '^src/postgres/' },
      to: { path: '^src/postgres/', dependencyTypesNot: ['dynamic-import'] },
    },
  ],
  required: [
    {
      // A rule that every module directly in src/internal/ breaks: one violation per such file,
      // whatever it imports (no module's path is empty).
      name: 'internal-file-outside-a-folder',
      severity: 'error',
      comment:
        'No module directly in src/internal/: each belongs in a folder of its layer (endpoint, call, request, or a step: retry, exchange, waiting, report, tracing, validate, hatches).',
      module: { path: '^src/internal/[^/]+$' },
      to: { path: '^$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // `import type` is a dependency too: a cycle or a crossed layer through types is one all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    reporterOptions: {},
  },
};
