// Libraries README.md's snippets import that the consumer project does not install, as far as
// the snippets use them (scripts/readme-snippets.mjs). bullmq and undici are not here: the
// check installs the real packages (scripts/check-package.mjs).
// OpenTelemetry's Node SDK, as the tracing snippet uses it; examples/tracing.ts, the same setup,
// is type-checked against the real packages (devDependencies) by npm run typecheck.
declare module '@opentelemetry/auto-instrumentations-node' {
  export function getNodeAutoInstrumentations(config?: object): unknown[];
}

declare module '@opentelemetry/sdk-node' {
  export class NodeSDK {
    constructor(options?: { instrumentations?: unknown[]; [option: string]: unknown });
    start(): void;
    shutdown(): Promise<void>;
  }
}
