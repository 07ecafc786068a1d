import { describe, expect, test } from 'vitest';
import * as zClassic from 'zod';
import * as z from 'zod/mini';
import * as source from '../../src/index';

type Sdk = typeof source;

// The README promises that the exported (zod/mini) schemas compose with an application's own zod.
// The Node build inlines its own copy of zod, so it is checked too: zod 4 recognises schemas and
// errors by their traits rather than by class identity, which is what lets two copies meet.
// (`npm test` builds dist/ before running the suite.)
const builds: [string, () => Promise<Sdk>][] = [
  ['the source (zod shared with the app)', async () => source],
  [
    'the Node build (zod inlined)',
    async () => (await import(new URL('../../dist/node/index.js', import.meta.url).href)) as unknown as Sdk,
  ],
];

describe.each(builds)('the exported schemas of %s', (_name, load) => {
  test('extend with zod/mini, keeping their own rules', async () => {
    const { OpportunitySchema } = await load();
    const Tagged = z.extend(OpportunitySchema, { tag: z.string() });

    expect(Tagged.safeParse({ id: 'o1', tag: 'vip' }).success).toBe(true);
    expect(Tagged.safeParse({ id: 'o1' }).success).toBe(false);
    expect(Tagged.safeParse({ id: 1, tag: 'vip' }).success).toBe(false);
  });

  test('nest inside classic zod schemas', async () => {
    const { OpportunitySchema } = await load();
    const Import = zClassic.object({ deal: OpportunitySchema, note: zClassic.string() });

    expect(Import.parse({ deal: { id: 'o1', amount: 5 }, note: 'n' })).toEqual({
      deal: { id: 'o1', amount: 5 },
      note: 'n',
    });
    expect(Import.safeParse({ deal: { amount: 5 }, note: 'n' }).success).toBe(false);
  });

  test('report English messages when parsed with the en locale, as the README shows', async () => {
    const { ActivityCreateInputSchema } = await load();
    const result = ActivityCreateInputSchema.safeParse(
      { opportunityId: 'o1', type: 'call', subject: '' },
      { error: z.locales.en().localeError },
    );

    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('Too small: expected string to have >=1 characters');
  });

  test("throw errors that the application's zod recognises as zod errors", async () => {
    const { OpportunitySchema } = await load();
    const error = (() => {
      try {
        OpportunitySchema.parse({ id: 1 });
      } catch (caught) {
        return caught;
      }
    })();

    expect(error).toBeInstanceOf(z.core.$ZodError);
    expect((error as z.core.$ZodError).issues[0]?.path).toEqual(['id']);
  });
});
