import { describe, expect, test } from 'vitest';
import { CrmValidationError } from '../../src/index';
import { captureAll, makeClient } from '../support/capture';

describe('misspelt options', () => {
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

  test('prefetch, a list option, is refused by a single-record method', async () => {
    const seen = captureAll();

    const error = await makeClient()
      .opportunities.get('opp_1', { prefetch: 2 } as never)
      .catch((e: unknown) => e);

    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues.map((i) => i.field)).toEqual(['prefetch']);
    expect(seen).toEqual([]);
  });
});

describe('misspelt constructor options', () => {
  test('a misspelt option of new CrmClient() is refused, naming it and the nearest option', () => {
    let error: unknown;
    try {
      makeClient({ timout: 5000 } as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(CrmValidationError);
    expect((error as CrmValidationError).issues).toEqual([
      { field: 'timout', path: ['timout'], message: 'Unknown option; did you mean "timeout"?' },
    ]);
  });

  test('withOptions() and a call name the nearest option the same way', async () => {
    expect(() => makeClient().withOptions({ prefech: 1 } as never)).toThrow('did you mean "prefetch"?');
    const error = await makeClient()
      .opportunities.get('opp_1', { singal: undefined } as never)
      .catch((e: unknown) => e);
    expect((error as CrmValidationError).issues[0]?.message).toBe('Unknown option; did you mean "signal"?');
  });

  test('an option near none is refused as unknown', () => {
    expect(() => makeClient({ colour: 'red' } as never)).toThrow('colour: Unknown option');
  });
});
