// The names README.md's snippets use without defining them: the client a section set up
// earlier, and your own code and data. A snippet that defines or imports one of them shadows it.
// A new README section that uses a new free name declares it here (scripts/readme-snippets.mjs).
import type * as sdk from 'crm-integration-sdk';

interface ErpRecord {
  readonly id: string;
  readonly [field: string]: string | number;
}

declare global {
  // Set up by an earlier snippet.
  const crm: sdk.CrmClient;
  // Your code.
  const vault: { read(path: string): Promise<string> };
  const tenants: readonly { readonly tenantId: string; readonly apiKey: string }[];
  function write(record: object): Promise<void>;
  function sync(record: object): Promise<void>;
  function syncDeal(crm: sdk.CrmClient, deal: { readonly name: string }): Promise<void>;
  const deal: { readonly name: string };
  const rows: readonly sdk.ContactCreateInput[];
  const customers: readonly (ErpRecord & { erpId: string; name: string; sector: string })[];
  const people: readonly (ErpRecord & { customerId: string; email: string; first: string })[];
  const deals: readonly (ErpRecord & { customerId: string; personId: string; title: string; amount: number })[];
  const events: readonly (ErpRecord & { dealId: string; text: string })[];
  const erp: {
    customers(): AsyncIterable<{ key: string; data: sdk.AccountCreateInput }>;
    people(): AsyncIterable<{ key: string; accountKey?: string; data: sdk.ContactCreateInput }>;
  };
  function loadSlice(slice: unknown): Promise<never>;
  function alertOps(tenantId: string, records: readonly unknown[]): Promise<void>;
  function currentTraceId(): string;
  const log: { warn(...words: unknown[]): void };
  const metrics: { record(operation: string, status: number | undefined): void };
}
