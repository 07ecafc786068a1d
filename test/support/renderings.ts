import { inspect } from 'node:util';
import { expect } from 'vitest';

/** Every way an error usually reaches a log, plus its cause chain. */
export function renderings(value: unknown): string[] {
  const error = value as Error;
  const cloned = (() => {
    try {
      return inspect(structuredClone(error), { depth: null, showHidden: true });
    } catch {
      return '';
    }
  })();
  const out = [
    String(error?.message),
    String(error),
    JSON.stringify(error) ?? '',
    inspect(error, { depth: null, showHidden: true }),
    String(error?.stack),
    cloned,
  ];
  let c: unknown = error?.cause;
  for (let i = 0; i < 10 && c !== undefined; i++) {
    out.push(inspect(c, { depth: null, showHidden: true }));
    c = (c as { cause?: unknown })?.cause;
  }
  return out;
}

function leaks(value: unknown, secret: string): string | undefined {
  for (const text of renderings(value)) {
    if (text.toLowerCase().includes(secret.toLowerCase())) return text.slice(0, 400);
  }
  return undefined;
}

export function expectAbsent(value: unknown, secret: string): void {
  const found = leaks(value, secret);
  expect(found, `secret found in: ${found}`).toBeUndefined();
}
