// Libraries README.md's snippets import that the consumer project does not install, as far as
// the snippets use them (scripts/readme-snippets.mjs). undici and bullmq are yours to install.
declare module 'bullmq' {
  export interface Job {
    readonly data: {
      readonly tenantId: string;
      readonly rows: readonly import('crm-integration-sdk').ContactCreateInput[];
      readonly [field: string]: unknown;
    };
  }
  export class Worker {
    constructor(queue: string, processor: (job: Job) => Promise<unknown>, options?: object);
  }
}

declare module 'undici' {
  export class ProxyAgent {
    constructor(url: string);
  }
}

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
