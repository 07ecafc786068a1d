import { describe, expectTypeOf, it } from 'vitest';
import * as z from 'zod/mini';
import type {
  Account,
  AccountCreateInput,
  AccountCreateInputSchema,
  AccountSchema,
  AccountUpdateInput,
  AccountUpdateInputSchema,
  AccountUpdateResult,
  AccountUpdateResultSchema,
  Activity,
  ActivityCreateInput,
  ActivityCreateInputSchema,
  ActivityListParams,
  ActivityListParamsSchema,
  ActivitySchema,
  ApiKeyGenerateResult,
  ApiKeyGenerateResultSchema,
  ApiKeyStatus,
  ApiKeyStatusSchema,
  Contact,
  ContactCreateInput,
  ContactInputSchema,
  ContactListParams,
  ContactListParamsSchema,
  ContactSchema,
  ContactUpdateInput,
  CrmClient,
  GrantResolution,
  GrantResolutionSchema,
  Opportunity,
  OpportunityCreateInput,
  OpportunityUpdateInput,
  OpportunityUpdateInputSchema,
  Pagination,
  PaginationSchema,
  WithUnknownFields,
} from '../../src/index';
import { OpportunityCreateInputSchema, OpportunitySchema } from '../../src/index';
import { opt } from '../../src/schemas/common';
import type { InputSchemaOf, NarrowedInputSchemaOf, RecordSchemaOf } from '../../src/schemas/named';

declare const crm: CrmClient;
declare const opportunity: Opportunity;

describe('each named type is what its schema infers', () => {
  it('types every response schema by its record', () => {
    expectTypeOf<z.infer<typeof OpportunitySchema>>().toEqualTypeOf<Opportunity>();
    expectTypeOf<z.infer<typeof ActivitySchema>>().toEqualTypeOf<Activity>();
    expectTypeOf<z.infer<typeof AccountSchema>>().toEqualTypeOf<Account>();
    expectTypeOf<z.infer<typeof ContactSchema>>().toEqualTypeOf<Contact>();
    expectTypeOf<z.infer<typeof PaginationSchema>>().toEqualTypeOf<Pagination>();
    expectTypeOf<z.infer<typeof AccountUpdateResultSchema>>().toEqualTypeOf<AccountUpdateResult>();
    expectTypeOf<z.infer<typeof GrantResolutionSchema>>().toEqualTypeOf<GrantResolution>();
    expectTypeOf<z.infer<typeof ApiKeyStatusSchema>>().toEqualTypeOf<ApiKeyStatus>();
    expectTypeOf<z.infer<typeof ApiKeyGenerateResultSchema>>().toEqualTypeOf<ApiKeyGenerateResult>();
  });

  it('types every input schema by its input', () => {
    expectTypeOf<z.input<typeof OpportunityCreateInputSchema>>().toEqualTypeOf<OpportunityCreateInput>();
    expectTypeOf<z.input<typeof OpportunityUpdateInputSchema>>().toEqualTypeOf<OpportunityUpdateInput>();
    expectTypeOf<z.input<typeof ActivityCreateInputSchema>>().toEqualTypeOf<ActivityCreateInput>();
    expectTypeOf<z.input<typeof ActivityListParamsSchema>>().toEqualTypeOf<ActivityListParams>();
    expectTypeOf<z.input<typeof AccountCreateInputSchema>>().toEqualTypeOf<AccountCreateInput>();
    expectTypeOf<z.input<typeof AccountUpdateInputSchema>>().toEqualTypeOf<AccountUpdateInput>();
    expectTypeOf<z.input<typeof ContactInputSchema>>().toEqualTypeOf<ContactCreateInput>();
    expectTypeOf<z.input<typeof ContactInputSchema>>().toEqualTypeOf<ContactUpdateInput>();
    expectTypeOf<z.input<typeof ContactListParamsSchema>>().toEqualTypeOf<ContactListParams>();
  });

  it('keeps the types zod infers today: nullish response fields, date-times as Date or string', () => {
    expectTypeOf<Opportunity['name']>().toEqualTypeOf<string | null | undefined>();
    expectTypeOf<Pick<Opportunity, 'name'>>().toEqualTypeOf<{ name?: string | null | undefined }>();
    expectTypeOf<Pick<OpportunityCreateInput, 'name' | 'closeDate'>>().toEqualTypeOf<{
      name: string;
      closeDate?: Date | string | undefined;
    }>();
    // What is sent is what the schema outputs: date-times as ISO strings.
    expectTypeOf<z.output<typeof OpportunityCreateInputSchema>['closeDate']>().toEqualTypeOf<string | undefined>();
  });

  it('keeps the schemas zod/mini objects that compose', () => {
    const Tagged = z.extend(OpportunitySchema, { tag: z.string() });
    expectTypeOf<z.infer<typeof Tagged>['tag']>().toEqualTypeOf<string>();
    expectTypeOf<z.infer<typeof Tagged>['amount']>().toEqualTypeOf<number | null | undefined>();
    expectTypeOf(z.pick(OpportunityCreateInputSchema, { name: true }).shape.name).toExtend<z.ZodMiniType<string>>();
    expectTypeOf(OpportunitySchema.shape.id).toExtend<z.ZodMiniType<string>>();
  });
});

describe('response records name only the fields the SDK knows', () => {
  it('refuses a misspelt field, read or tested', () => {
    // @ts-expect-error no such field: amount
    opportunity.amout;
    // @ts-expect-error no such field: amount
    if (opportunity.amuont) throw new Error('unreachable');
    // @ts-expect-error no such field: subject
    crm.activities.create({ opportunityId: 'o', type: 'call', subject: 's' }).then((activity) => activity.subjcet);
    // @ts-expect-error no such field: email
    crm.contacts.list().then((page) => page.data[0]?.emial);
    // @ts-expect-error no such field: name
    crm.accounts.create({ name: 'Acme' }).then((account) => account.nmae);
    // @ts-expect-error no such field: total
    crm.contacts.list().then((page) => page.pagination.totl);
  });

  it('reads the fields the SDK does not know through WithUnknownFields, as unknown', () => {
    const withUnknown = opportunity as WithUnknownFields<Opportunity>;
    expectTypeOf(withUnknown.stage).toBeUnknown();
    expectTypeOf(withUnknown.amount).toEqualTypeOf<number | null | undefined>();
    expectTypeOf(withUnknown.id).toEqualTypeOf<string>();
    expectTypeOf<WithUnknownFields<Contact>['anything']>().not.toBeAny();
    // A record is still a plain object of its fields.
    expectTypeOf<Opportunity>().toExtend<Record<string, unknown>>();
  });

  it('leaves open objects open: their fields are unknown', () => {
    expectTypeOf<GrantResolution['anything']>().toBeUnknown();
    expectTypeOf<ApiKeyGenerateResult['apiKey']>().toBeUnknown();
  });
});

describe('the schema check refuses a named type that says other than its schema', () => {
  const shape = { id: z.string(), amount: opt(z.number()) };

  it('accepts a type that names exactly the fields of the shape', () => {
    const schema = (z.looseObject as RecordSchemaOf<{ id: string; amount?: number | null | undefined }>)(shape);
    expectTypeOf<z.infer<typeof schema>>().toEqualTypeOf<{ id: string; amount?: number | null | undefined }>();
  });

  it('refuses a field of another type, a missing or an extra field, even optional ones', () => {
    // @ts-expect-error amount is a number in the schema
    (z.looseObject as RecordSchemaOf<{ id: string; amount?: string | null | undefined }>)(shape);
    // @ts-expect-error the type forgets the schema's optional amount
    (z.looseObject as RecordSchemaOf<{ id: string }>)(shape);
    // @ts-expect-error the type has an optional field that the schema does not declare
    (z.looseObject as RecordSchemaOf<{ id: string; amount?: number | null | undefined; stage?: string }>)(shape);
    // @ts-expect-error the schema's amount may be null
    (z.looseObject as RecordSchemaOf<{ id: string; amount?: number | undefined }>)(shape);
  });

  it("checks the SDK's own records the same way", () => {
    (z.looseObject as RecordSchemaOf<Opportunity>)(OpportunitySchema.shape);
    // @ts-expect-error Opportunity without dsa is not what the opportunity schema infers
    (z.looseObject as RecordSchemaOf<Omit<Opportunity, 'dsa'>>)(OpportunitySchema.shape);
    // @ts-expect-error a required stage is not what the opportunity schema infers
    (z.looseObject as RecordSchemaOf<Opportunity & { stage: string }>)(OpportunitySchema.shape);
  });

  it('refuses an input type that differs from what the schema accepts', () => {
    const input = { name: z.string(), note: z.optional(z.string()) };
    (z.strictObject as InputSchemaOf<{ name: string; note?: string | undefined }>)(input);
    // @ts-expect-error name is required by the schema
    (z.strictObject as InputSchemaOf<{ name?: string | undefined; note?: string | undefined }>)(input);
    // @ts-expect-error the schema's optional note also accepts undefined (exactOptionalPropertyTypes)
    (z.strictObject as InputSchemaOf<{ name: string; note?: string }>)(input);
  });

  it('refuses a narrowed input whose shared fields or pairs differ from the object schema', () => {
    const fields = z.strictObject({
      subject: z.string(),
      a: z.optional(z.string()),
      b: z.optional(z.string()),
    });
    const keep = z.transform((value: z.output<typeof fields>) => value);
    type Pair = 'a' | 'b';
    (
      z.pipe as NarrowedInputSchemaOf<{ subject: string } & ({ a: string; b?: never } | { a?: never; b: string }), Pair>
    )(fields, keep);
    (
      z.pipe as NarrowedInputSchemaOf<
        { subject?: string | undefined } & ({ a: string; b?: never } | { a?: never; b: string }),
        Pair
      >
    )(
      // @ts-expect-error subject is required by the schema
      fields,
      keep,
    );
    (
      z.pipe as NarrowedInputSchemaOf<{ subject: string } & ({ a: number; b?: never } | { a?: never; b: string }), Pair>
    )(
      // @ts-expect-error a is a string in the schema
      fields,
      keep,
    );
    (z.pipe as NarrowedInputSchemaOf<{ subject: string } & ({ a: string } | { b: string; c: string }), Pair>)(
      // @ts-expect-error c is not a field of the schema
      fields,
      keep,
    );
  });
});
