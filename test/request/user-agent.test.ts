import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { CrmClient, CrmValidationError } from '../../src/index';
import { BASE_URL, capture, makeClient, ok } from '../support/capture';

/* The SDK names itself, its runtime and the integrator's app in a User-Agent built once per client. */

const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  version: string;
};
const OPPORTUNITY = '/integrations/v1/opportunities/opp_1';

afterEach(() => {
  vi.unstubAllGlobals();
});

async function userAgentOf(crm: CrmClient): Promise<string | null> {
  const seen = capture('get', OPPORTUNITY, ok({ id: 'opp_1', name: 'x' }));
  await crm.opportunities.get('opp_1');
  return seen[0]?.headers.get('user-agent') ?? null;
}

describe('User-Agent', () => {
  test("names the SDK with package.json's version, the runtime and its version, and the OS", async () => {
    expect(await userAgentOf(makeClient())).toBe(
      `crm-integration-sdk/${version} (node/${process.versions.node}; ${process.platform})`,
    );
  });

  test('appends appInfo as <name>/<version> (+<url>), and its name alone when that is all it has', async () => {
    const app = { name: 'invoice-sync', version: '2.3.0', url: 'https://example.com/sync' };
    expect(await userAgentOf(makeClient({ appInfo: app }))).toMatch(
      / \(node\/[^)]+\) invoice-sync\/2\.3\.0 \(\+https:\/\/example\.com\/sync\)$/,
    );
    expect(await userAgentOf(makeClient({ appInfo: { name: 'erp-load' } }))).toMatch(/\) erp-load$/);
  });

  test('is built once per client: its calls hand fetch the same headers object', async () => {
    const sent: unknown[] = [];
    const fetch = async (_url: RequestInfo | URL, init?: RequestInit) => {
      sent.push(init?.headers);
      return Response.json({ success: true, data: { id: 'opp_1', name: 'x' } });
    };
    const crm = makeClient({ fetch, appInfo: { name: 'app' } });
    await crm.opportunities.get('opp_1');
    await crm.opportunities.get('opp_2');
    expect(sent[0]).toBe(sent[1]);
    expect((sent[0] as Record<string, string>)['user-agent']).toMatch(/^crm-integration-sdk\/.+ app$/);
  });

  test('names Deno and Bun by their own versions', async () => {
    vi.stubGlobal('Deno', { version: { deno: '2.5.1' }, build: { os: 'darwin' } });
    expect(await userAgentOf(makeClient())).toBe(`crm-integration-sdk/${version} (deno/2.5.1; darwin)`);
    vi.unstubAllGlobals();
    const bun = { ...process, versions: { ...process.versions, bun: '1.3.0' }, platform: 'linux' };
    vi.stubGlobal('process', bun);
    const crm = makeClient();
    vi.unstubAllGlobals();
    expect(await userAgentOf(crm)).toBe(`crm-integration-sdk/${version} (bun/1.3.0; linux)`);
  });

  test('is not set where the runtime is none of them (a browser sends its own, and forbids setting it)', async () => {
    vi.stubGlobal('process', undefined);
    const crm = new CrmClient({ baseUrl: BASE_URL, apiKey: 'k', tenantId: 't', appInfo: { name: 'app' } });
    vi.unstubAllGlobals();
    const agent = await userAgentOf(crm);
    expect(agent ?? '').not.toContain('crm-integration-sdk');
  });

  test("a caller's User-Agent header, in any case, replaces the SDK's", async () => {
    expect(await userAgentOf(makeClient({ headers: { 'User-Agent': 'mine/1.0' } }))).toBe('mine/1.0');
  });

  test.each([
    [{ name: 'app\r\nx-api-key: stolen' }, 'appInfo.name'],
    [{ name: '' }, 'appInfo.name'],
    [{ name: 'x'.repeat(101) }, 'appInfo.name'],
    [{ name: 'app', version: '1.0\n' }, 'appInfo.version'],
    [{ name: 'app', url: `https://example.com/${'x'.repeat(300)}` }, 'appInfo.url'],
    [{ name: 'app', homepage: 'https://example.com' }, 'appInfo.homepage'],
    ['app', 'appInfo'],
  ])('refuses appInfo %j, naming %s', (appInfo, field) => {
    let error: unknown;
    try {
      makeClient({ appInfo: appInfo as never });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((i) => i.field)).toEqual([field]);
  });
});
