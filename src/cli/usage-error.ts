/**
 * The command line was used wrongly: an unknown command or option, a missing value, `--json`
 * that is not a JSON object. Exits 2, as invalid input does, and nothing is sent.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  /** The help to point at: `crm contacts list --help`. */
  readonly help: string;

  constructor(message: string, help = 'crm --help') {
    super(message);
    this.help = help;
  }
}
