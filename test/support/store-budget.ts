import { afterAll, beforeAll } from 'vitest';
import { setStoreBudgetMs } from '../../src/redis/store-ask';

/**
 * For the calling file, the time a shared store may take to answer: `ms` rather than 100 ms. A
 * Redis on a busy machine (a CI runner, a laptop building) answered later than 100 ms, and the
 * workers then fell back on pacing alone, with a warning: right in production, where the budget
 * keeps a slow Redis from slowing the calls; a flake in a test of what sharing does.
 */
export function useStoreBudget(ms: number): void {
  let was: number | undefined;
  beforeAll(() => {
    was = setStoreBudgetMs(ms);
  });
  afterAll(() => {
    if (was !== undefined) setStoreBudgetMs(was);
  });
}
