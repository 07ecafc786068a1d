import { describe, it } from 'vitest';

/*
 * Found by the attack on `crm` and left open: each is debatable or wider than a small fix.
 */
describe('crm: left open', () => {
  // `crm contacts list --colour red --help` is a usage error (exit 2), not the help: parseArgs
  // refuses the unknown option before --help is read. git prints the help; most parseArgs CLIs do not.
  it.todo('prints the help when --help is given beside an unknown option');

  // `--limit 1 --limit 2` takes the last value silently (parseArgs); a wrapper's `--tenant a`
  // overridden by the caller's `--tenant b` may be wanted, so refusing it is a design choice.
  it.todo('refuses a connection flag given twice with two values');
});
