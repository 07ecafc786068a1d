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

  // `--api-key-file /dev/zero` (or `--json @/dev/zero`) reads until the string limit: the files
  // are read whole. A cap (a key is short; an input a few MiB) would need a bounded reader in Io.
  it.todo('reads at most a bounded prefix of --api-key-file and --json @file');

  // `--api-key-file sk_live_...` (a key given where its path goes) is echoed in
  // "cannot read sk_live_... (ENOENT)": the path is the message's point, and argv showed it anyway.
  it.todo('names an unreadable --api-key-file without echoing a value that looks like a key');
});
