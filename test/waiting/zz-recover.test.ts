import { expect, test, vi } from 'vitest';
import { makeClient } from '../support/capture';
import { contactsServer, created, refused, usePacedClock } from '../support/paced';
usePacedClock();
test('measure', async () => {
    let limit = 10;
    let tokens = 1;
    let last = Date.now();
    const seen = contactsServer((index) => {
      const now = Date.now();
      tokens = Math.min(limit / 10, tokens + ((now - last) / 1000) * limit);
      last = now;
      if (tokens < 1) return refused(1);
      tokens -= 1;
      return created(index);
    });
    const crm = makeClient({ throttle: 'auto' });
    const accepted = (from: number, to: number) =>
      seen.filter((request) => request.status === 200 && request.at >= from && request.at < to).length;
    const t0 = performance.now();
    const job = Promise.all(Array.from({ length: 6000 }, (_, i) => crm.contacts.create({ email: `c${i}@x.io` })));
    job.catch(() => {});
    await vi.advanceTimersByTimeAsync(20_000);
    const start = Date.now();
    console.log('first 20s', accepted(start - 10_000, start), 'wall', (globalThis as any).__x);
    limit = 40;
    await vi.advanceTimersByTimeAsync(240_000);
    const windows = Array.from({ length: 230 }, (_, i) => accepted(start + i * 1000, start + i * 1000 + 10_000));
    console.log(windows.map((w, i) => `${i}:${w}`).filter((_, i) => i % 10 === 0).join(' '), 'first>200 at', windows.findIndex((w) => w > 200), 'requests', seen.length);
}, 300_000);
