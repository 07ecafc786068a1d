import { inspect } from 'node:util';
import { describe, expect, test } from 'vitest';
import { type CrmAttemptContext, type CrmCallContext, CrmClient } from '../../src/index';
import { API_KEY, OPP_ID, OPP_PATH, OPPORTUNITY, reply, TENANT, useFaultServer } from '../support/fault-server';
import { useOtel } from '../support/otel';
import { record } from '../support/tracing-channels';

/*
 * Keys a server echoes where tracing publishes them, on a real socket: the key an apiKey function
 * returns, echoed in a same-origin redirect's Location, and any key echoed in a request id.
 */

const otel = useOtel();
const fault = useFaultServer();
const VAULT_KEY = 'key_live_fr0mTheVau1t';
const published = (calls: CrmCallContext[], attempts: CrmAttemptContext[]) =>
  inspect(
    {
      calls: calls.map(({ result: _, ...call }: CrmCallContext & { result?: unknown }) => call),
      attempts: attempts.map(({ result: _, ...attempt }: CrmAttemptContext & { result?: unknown }) => attempt),
    },
    { depth: 12, showHidden: true },
  );
const scopes = (url: string) => ({
  'a static key': new CrmClient({ baseUrl: url, apiKey: VAULT_KEY, tenantId: TENANT }),
  'an apiKey function': new CrmClient({ baseUrl: url, apiKey: async () => VAULT_KEY, tenantId: TENANT }),
  'a withTenant scope': new CrmClient({ baseUrl: url, apiKey: API_KEY }).withTenant(TENANT, { apiKey: VAULT_KEY }),
  'a withTenant scope over an apiKey function': new CrmClient({
    baseUrl: url,
    apiKey: async () => VAULT_KEY,
  }).withTenant(TENANT),
});

describe('a key a server echoes is masked in what tracing publishes, whatever the kind of scope', () => {
  test.each(Object.keys(scopes('http://x')))(
    "%s: a same-origin redirect whose Location holds the key: attempt.url and the span's url.full are masked",
    async (scope) => {
      fault().script('GET', OPP_PATH, reply.with(307, '', { headers: { location: `/moved/opp_1?key=${VAULT_KEY}` } }));
      fault().otherwise('GET', '/moved/opp_1', reply.ok(OPPORTUNITY));
      const { calls, attempts } = record();
      otel.instrument();
      const crm = scopes(fault().url)[scope as keyof ReturnType<typeof scopes>];

      const opportunity = await crm.opportunities.get(OPP_ID);

      expect(opportunity.id).toBe(OPP_ID);
      // The redirect was followed, with the key in its query as the server asked.
      expect(fault().received('GET', '/moved/opp_1')[0]?.query.get('key')).toBe(VAULT_KEY);
      expect(attempts.map((attempt) => attempt.url)).toEqual([
        `${fault().url}${OPP_PATH}?tenantId=${TENANT}`,
        `${fault().url}/moved/opp_1?key=[redacted]`,
      ]);
      expect(published(calls, attempts)).not.toContain(VAULT_KEY);
      expect(otel.recorded()).not.toContain(VAULT_KEY);
      expect(otel.spans().map((span) => span.attributes['url.full'])).toContain(
        `${fault().url}/moved/opp_1?key=[redacted]`,
      );
    },
  );

  test.each(
    Object.keys(scopes('http://x')).flatMap((scope) =>
      ['x-request-id', 'request-id', 'x-correlation-id'].map((header) => [scope, header]),
    ),
  )("%s: a 2xx whose %s echoes the key: the call context's requestId is masked", async (scope, header) => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { headers: { [header]: `req_1 for ${VAULT_KEY}` } }));
    const { calls, attempts } = record();
    const crm = scopes(fault().url)[scope as keyof ReturnType<typeof scopes>];

    await crm.opportunities.get(OPP_ID);

    expect(calls[0]?.status).toBe(200);
    expect(calls[0]?.requestId).toBe('req_1 for [redacted]');
    expect(published(calls, attempts)).not.toContain(VAULT_KEY);
  });

  test('a request id that holds no key is published as the server sent it', async () => {
    fault().otherwise('GET', OPP_PATH, reply.ok(OPPORTUNITY, { headers: { 'x-request-id': 'req_42' } }));
    const { calls } = record();

    await new CrmClient({ baseUrl: fault().url, apiKey: async () => VAULT_KEY, tenantId: TENANT }).opportunities.get(
      OPP_ID,
    );

    expect(calls[0]?.requestId).toBe('req_42');
  });
});
