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
