import { describe, expect, test } from 'vitest';
import type { CrmRequestLog } from '../../src/index';
import { capture, makeClient, ok } from '../support/capture';

/* Header names are case-insensitive (RFC 9110): the later of two spellings replaces the earlier, as fetch would send one. */

const OPPORTUNITY = '/integrations/v1/opportunities/opp_1';
const opportunity = ok({ id: 'opp_1', name: 'x' });

describe('headers of the client, a derived client and a call', () => {
  test("a call's header replaces the client's of another case instead of joining it", async () => {
    const seen = capture('get', OPPORTUNITY, opportunity);
    const crm = makeClient({ headers: { 'X-Job': 'nightly' } });

    await crm.opportunities.get('opp_1', { headers: { 'x-job': 'manual' } });

    expect(seen[0]?.headers.get('x-job')).toBe('manual');
  });

  test("a derived client's header replaces its parent's, and a call's replaces both", async () => {
    const seen = capture('get', OPPORTUNITY, opportunity);
    const scoped = makeClient({ headers: { 'x-job': 'nightly' } }).withOptions({ headers: { 'X-JOB': 'scoped' } });

    await scoped.opportunities.get('opp_1');
    await scoped.opportunities.get('opp_1', { headers: { 'X-Job': 'call' } });

    expect(seen.map((s) => s.headers.get('x-job'))).toEqual(['scoped', 'call']);
  });

  test('a header named in redactHeaders in another case is masked in log lines', async () => {
    capture('get', OPPORTUNITY, opportunity);
    const logged: CrmRequestLog[] = [];
    const crm = makeClient({
      headers: { 'X-Partner-Token': 'partner-secret-value' },
      redactHeaders: ['x-PARTNER-token'],
      logger: (_line, entry) => void logged.push(entry),
    });

    await crm.opportunities.get('opp_1', { headers: { 'x-partner-token': 'call-secret-value' } });

    expect(JSON.stringify(logged)).not.toContain('secret-value');
    expect(logged[0]?.headers['x-partner-token']).toBe('[redacted]');
  });
});
