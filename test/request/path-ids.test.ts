import fc from 'fast-check';
import { HttpResponse, http } from 'msw';
import { describe, expect, test } from 'vitest';
import { type CrmClient, CrmValidationError } from '../../src/index';
import { BASE_URL, makeClient, TENANT } from '../support/capture';
import { server } from '../support/msw-server';

/** What the server saw of one request. */
interface Seen {
  method: string;
  pathname: string;
  tenantId: string | null;
}

/** Records every request sent to the base URL, whatever its path, and answers a valid envelope. */
function recordAll(): Seen[] {
  const seen: Seen[] = [];
  server.use(
    http.all(`${BASE_URL}/*`, ({ request }) => {
      const url = new URL(request.url);
      seen.push({ method: request.method, pathname: url.pathname, tenantId: url.searchParams.get('tenantId') });
      return HttpResponse.json({ success: true, data: { id: 'answered' } });
    }),
  );
  return seen;
}

/** Pieces that URL parsing, routing or encoding could mistake for structure. */
const TRICKY = [
  '../',
  '..',
  '.',
  './',
  '/',
  '//',
  '\\',
  '..\\',
  '?',
  '?tenantId=other',
  '#',
  '#frag',
  '%',
  '%2F',
  '%2f',
  '%2e',
  '%2e%2e',
  '%2E%2E%2F',
  '%00',
  '%%',
  '&',
  '=',
  ';',
  '@',
  ':',
  '+',
  ' ',
  '\t',
  '\r',
  '\n',
  '\r\n',
  '\0',
  '\u007f',
  'é',
  'ß',
  '中文',
  '😀',
  '\u200b',
  '\ufeff',
  '\u202e',
  'ｆｕｌｌ',
  'accounts',
  'opportunities',
  'integrations',
  'v1',
] as const;

/** The string with each lone surrogate replaced by U+FFFD, as `String.prototype.toWellFormed()` does. */
const wellFormed = (s: string) =>
  s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** A lone UTF-16 surrogate, which `encodeURIComponent` cannot encode. */
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

/**
 * Well-formed strings of every kind a caller might pass as an id, weighted toward the tricky ones.
 * Long ones stay under MSW's 8 192-character URL limit once percent-encoded (3 characters a byte).
 */
const anyId: fc.Arbitrary<string> = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('', '.', '..', '...', '.. ', ' ..', '%2e%2e', '../..', '/', '?', '#', '%') },
  { weight: 3, arbitrary: fc.array(fc.constantFrom(...TRICKY), { minLength: 1, maxLength: 8 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...TRICKY), maxLength: 10 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1_000, maxLength: 2_500 }) },
);

/** The ids the client must refuse: they would resolve to another path, or say nothing. */
const refused = (id: string) => id === '' || id === '.' || id === '..';

type Call = (crm: CrmClient, id: string) => PromiseLike<unknown>;

const CASES: readonly { name: string; method: string; collection: string; call: Call }[] = [
  {
    name: 'opportunities.get',
    method: 'GET',
    collection: 'opportunities',
    call: (crm, id) => crm.opportunities.get(id),
  },
  {
    name: 'opportunities.update',
    method: 'PUT',
    collection: 'opportunities',
    call: (crm, id) => crm.opportunities.update(id, { stage: 'won' }),
  },
  {
    name: 'accounts.update',
    method: 'PUT',
    collection: 'accounts',
    call: (crm, id) => crm.accounts.update(id, { status: 'active' }),
  },
  {
    name: 'contacts.update',
    method: 'PUT',
    collection: 'contacts',
    call: (crm, id) => crm.contacts.update(id, { position: 'CTO' }),
  },
];

type Outcome = { ok: true } | { ok: false; error: unknown };

/** Calls `call`, turning a synchronous throw into a test failure and settling the rest. */
async function settle(call: () => PromiseLike<unknown>): Promise<Outcome> {
  let pending: PromiseLike<unknown>;
  try {
    pending = call();
  } catch (error) {
    throw new Error(`The method threw synchronously instead of rejecting: ${String(error)}`);
  }
  return Promise.resolve(pending).then(
    (): Outcome => ({ ok: true }),
    (error: unknown): Outcome => ({ ok: false, error }),
  );
}

describe('any string as a path id', () => {
  test.each(CASES)(
    '$name either refuses the id before any I/O or sends it as one encoded segment of its own endpoint',
    async ({ method, collection, call }) => {
      const seen = recordAll();
      const crm = makeClient({ maxRetries: 0 });

      await fc.assert(
        fc.asyncProperty(anyId, async (id) => {
          seen.length = 0;
          const outcome = await settle(() => call(crm, id));

          if (refused(id)) {
            expect(outcome.ok ? 'resolved' : outcome.error).toBeInstanceOf(CrmValidationError);
            expect(seen).toEqual([]);
            return;
          }

          if (!outcome.ok) throw outcome.error;
          expect(seen).toEqual([
            { method, pathname: `/integrations/v1/${collection}/${encodeURIComponent(id)}`, tenantId: TENANT },
          ]);
        }),
        { numRuns: 150 },
      );
    },
  );

  test.each(CASES)(
    '$name refuses an id holding a lone UTF-16 surrogate with CrmValidationError, or sends it encoded as U+FFFD, never another error',
    async ({ method, collection, call }) => {
      // A lone surrogate has no UTF-8 form, so `encodeURIComponent` throws a URIError on it.
      const seen = recordAll();
      const crm = makeClient({ maxRetries: 0 });
      const withSurrogate = fc
        .tuple(
          fc.string({ unit: fc.constantFrom(...TRICKY), maxLength: 4 }),
          loneSurrogate,
          fc.string({ maxLength: 4 }),
        )
        .map(([before, surrogate, after]) => `${before}${surrogate}${after}`);

      await fc.assert(
        fc.asyncProperty(withSurrogate, async (id) => {
          seen.length = 0;
          const outcome = await settle(() => call(crm, id));

          if (outcome.ok) {
            expect(seen).toEqual([
              {
                method,
                pathname: `/integrations/v1/${collection}/${encodeURIComponent(wellFormed(id))}`,
                tenantId: TENANT,
              },
            ]);
          } else {
            expect(outcome.error).toBeInstanceOf(CrmValidationError);
            expect(seen).toEqual([]);
          }
        }),
        { numRuns: 50 },
      );
    },
  );

  test('the examples of the issue land on their own segment', async () => {
    const seen = recordAll();
    const crm = makeClient({ maxRetries: 0 });
    const examples = [
      '../',
      '?',
      '#',
      '%',
      '%2F',
      '%2e%2e',
      '../accounts/acc_1',
      'a/b',
      'ü',
      'a\r\nb',
      'x'.repeat(5_000),
    ];

    for (const id of examples) await crm.opportunities.get(id);

    expect(seen.map((request) => request.pathname)).toEqual(
      examples.map((id) => `/integrations/v1/opportunities/${encodeURIComponent(id)}`),
    );
    // Every one of them is exactly one segment below the collection.
    for (const request of seen) expect(request.pathname.split('/')).toHaveLength(5);
  });

  test.each(['', '.', '..'])(
    'the id %j is refused with CrmValidationError on every method, and nothing is sent',
    async (id) => {
      const seen = recordAll();
      const crm = makeClient({ maxRetries: 0 });

      for (const { call } of CASES) {
        const outcome = await settle(() => call(crm, id));
        expect(outcome.ok ? 'resolved' : outcome.error).toBeInstanceOf(CrmValidationError);
      }
      expect(seen).toEqual([]);
    },
  );
});
