import { describe, expect, test } from 'vitest';
import * as zod from 'zod';
import * as z from 'zod/mini';
import {
  AccountCreateInputSchema,
  ActivityCreateInputSchema,
  ContactCreateInputSchema,
  ContactInputSchema,
  type CrmValidationError,
  OpportunityCreateInputSchema,
} from '../../src/index';
import { captureAll, makeClient } from '../support/capture';

/* The exported schemas say what the SDK's own checks say: users check their CSV rows with them before a load. */

const messagesOf = (result: {
  success: boolean;
  error?: { issues: readonly { path: PropertyKey[]; message: string }[] };
}) => (result.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`);

describe('exported schemas', () => {
  test("a row's issues read as a call's do: 'Expected number, received NaN', not 'Invalid input'", async () => {
    const row = { name: 'Renewal', amount: Number.NaN, probability: 'high' };
    captureAll();
    const refused = await makeClient()
      .opportunities.create(row as never)
      .catch((e: unknown) => e);
    const call = (refused as CrmValidationError).issues.map((i) => `${i.field}: ${i.message}`);

    const parsed = messagesOf(OpportunityCreateInputSchema.safeParse(row));

    expect(parsed).toContain('amount: Expected number, received NaN');
    expect(parsed).toEqual(call);
  });

  test('the same messages through z.safeParse(), parse() and nested fields', () => {
    expect(messagesOf(z.safeParse(ContactCreateInputSchema, { isPrimary: 'yes', email: 'not-an-email' }))).toEqual([
      'email: Invalid email address',
      'isPrimary: Expected boolean, received string',
    ]);
    expect(() => AccountCreateInputSchema.parse({ name: 42 })).toThrow('Expected string, received number');
    expect(messagesOf(ActivityCreateInputSchema.safeParse({ type: 'fax', subject: 's', opportunityId: 'o' }))).toEqual([
      expect.stringMatching(/^type: Expected one of "/),
    ]);
  });

  test("an application's own zod schemas keep zod's messages", () => {
    expect(messagesOf(z.number().safeParse(Number.NaN))).not.toContain(': Expected number, received NaN');
    expect(zod.number().safeParse(Number.NaN).error?.issues[0]?.message).toBe(
      'Invalid input: expected number, received NaN',
    );
  });

  test('ContactCreateInputSchema is ContactInputSchema, by the name of its type', () => {
    expect(ContactCreateInputSchema).toBe(ContactInputSchema);
  });
});
