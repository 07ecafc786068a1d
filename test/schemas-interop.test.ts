import { describe, expect, test } from 'vitest';
import * as zClassic from 'zod';
import * as z from 'zod/mini';
import { ActivityCreateInputSchema, OpportunitySchema } from '../src/index';

// The README promises that the exported (zod/mini) schemas compose with an application's own zod.
describe('the exported schemas', () => {
  test('extend with zod/mini, keeping their own rules', () => {
    const Tagged = z.extend(OpportunitySchema, { tag: z.string() });

    expect(Tagged.safeParse({ id: 'o1', tag: 'vip' }).success).toBe(true);
    expect(Tagged.safeParse({ id: 'o1' }).success).toBe(false);
    expect(Tagged.safeParse({ id: 1, tag: 'vip' }).success).toBe(false);
  });

  test('nest inside classic zod schemas', () => {
    const Import = zClassic.object({ deal: OpportunitySchema, note: zClassic.string() });

    expect(Import.parse({ deal: { id: 'o1', amount: 5 }, note: 'n' })).toEqual({
      deal: { id: 'o1', amount: 5 },
      note: 'n',
    });
    expect(Import.safeParse({ deal: { amount: 5 }, note: 'n' }).success).toBe(false);
  });

  test('report English messages when parsed with the en locale, as the README shows', () => {
    const result = ActivityCreateInputSchema.safeParse(
      { opportunityId: 'o1', type: 'call', subject: '' },
      { error: z.locales.en().localeError },
    );

    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('Too small: expected string to have >=1 characters');
  });
});
