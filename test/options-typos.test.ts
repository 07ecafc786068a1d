import { describe, expect, test } from 'vitest';
import { CrmClient, CrmValidationError } from '../src/index';
import { BASE_URL, captureAll, makeClient } from './support/capture';

describe('misspelt options', () => {
  test('a misspelt client option is refused at construction, naming it', () => {
    const build = () => new CrmClient({ baseUrl: BASE_URL, timout: 5 } as never);

    expect(build).toThrow(CrmValidationError);
    expect(build).toThrow(/timout: Unknown field/);
  });

  test('a misspelt per-call option is refused before anything is sent, naming it', async () => {
    const seen = captureAll();

    const error = await makeClient()
      .opportunities.get('opp_1', { maxRetry: 0 } as never)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((i) => i.field)).toEqual(['maxRetry']);
    expect(seen).toEqual([]);
  });

  test('prefetch is accepted by list() and refused out of range', async () => {
    const seen = captureAll();

    const error = await makeClient()
      .contacts.list({}, { prefetch: 99 })
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((i) => i.field)).toEqual(['prefetch']);
    expect(seen).toEqual([]);
  });
});
