import type { CreateRun } from './create';
import { elsewhere } from './other-runs';
import { IN_DOUBT } from './parent-ids';
import type { Run } from './run';

// The send step of a create is create.ts, which knows nothing of the run; where a create's
// outcome goes (the counts, the parent's id, in doubt, another run's) is the run's. The run holds
// its creates (run.ts), but a create another run holds is decided again by other-runs.ts, which
// is above the run: so this wiring is made here, above both, and handed to the run.

/** The run's part in its creates (create.ts): what they need of it, and where their outcomes go. */
export function createRunOf(run: Run): CreateRun {
  return {
    committer: run.committer,
    runId: run.settings.runId,
    signal: run.options.signal,
    client: run.settings.crm,
    now: () => run.settings.now(),
    send: (kind, body, options) => run.call((o) => kind.create(run.settings.crm, body, o), options),
    elsewhere: (kind, key, value, from, claim) =>
      elsewhere(run, kind, { key, record: {}, canonical: { value, hash: from.hash, json: from.data } }, claim),
    fail: (error) => run.fail(error),
    failed: (type, key, error) => run.failed(type, key, error),
    inDoubt: (type, key) => {
      run.ids.remember(type, key, IN_DOUBT);
      run.tally.count(type, 'inDoubt');
      if (type === 'contacts' || type === 'activities') run.newlyInDoubt[type]++;
    },
    lostClaim: (type, key) => {
      run.ids.remember(type, key, IN_DOUBT);
      run.tally.skip(
        type,
        key,
        'its claim ended before its answer came (this run stalled past the lease): the run that took it over settles it',
      );
    },
    created: (type, key, id) => {
      if (type !== 'activities') run.ids.of(type).set(key, id);
      run.tally.count(type, 'created');
    },
    later: (outcome) => {
      const written: Promise<void> = outcome.finally(() => run.outcomes.delete(written));
      run.outcomes.add(written);
    },
  };
}
