import type { Reporter } from 'vitest/node';

/**
 * Ends the run with a plain `N passed, N failed` line, the closing line CI tools read whatever
 * the runner (vitest's own summary is decorated).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: Parameters<NonNullable<Reporter['onTestRunEnd']>>[0]): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      if (module.state() === 'failed' && module.children.size === 0) failed += 1;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
