/*
 * The command line as typed by people who paste: chat apps and word processors turn `--` into an
 * em or en dash (`—api-key=…`), and a flag so written must be read as the flag it is, above all
 * when it is a secret's, which is refused. No message quotes the value of an argument whose name
 * is a secret's.
 */

/**
 * The characters a dash may be pasted as: Unicode's dash punctuation (hyphen, non-breaking
 * hyphen, figure, en and em dashes, horizontal bar, small and full-width hyphen-minus, ...), the
 * soft hyphen, and the minus signs.
 */
const DASH = /[\p{Pd}\u00ad\u02d7\u2043\u207b\u208b\u2212\u2796]/gu;
const LEADING_DASHES = /^[\p{Pd}\u00ad\u02d7\u2043\u207b\u208b\u2212\u2796]+/u;

/**
 * An argument as the flag it looks like: a run of dashes of any kind, then a name starting with a
 * letter, is `--name` (`-n` for a one-letter name), with the dashes in the name made ASCII.
 * The value after `=` is kept as typed. Anything else (`−5`, a lone `—`, a flag all in ASCII) is
 * returned as it is.
 */
function asFlag(arg: string): string {
  const dashes = LEADING_DASHES.exec(arg)?.[0];
  if (!dashes) return arg;
  const rest = arg.slice(dashes.length);
  const end = rest.indexOf('=');
  const typed = end < 0 ? rest : rest.slice(0, end);
  const name = typed.replace(DASH, '-');
  // A flag typed in ASCII is left to parseArgs as it is (`-h`, a group of short flags).
  if (!/^[A-Za-z]/.test(name) || (/^-+$/.test(dashes) && name === typed)) return arg;
  // `-h`, `--help`; a name typed after one dash is a long name all the same when it is long.
  const prefix = name.length === 1 && dashes.length === 1 ? '-' : '--';
  return `${prefix}${name}${end < 0 ? '' : rest.slice(end)}`;
}

/** The arguments with each flag spelled as {@link asFlag} reads it; after `--`, every one as typed. */
export function flagsSpelled(argv: readonly string[]): string[] {
  const end = argv.indexOf('--');
  const flags = end < 0 ? argv : argv.slice(0, end);
  return [...flags.map(asFlag), ...(end < 0 ? [] : argv.slice(end))];
}

/** A name's letters alone, lower-case: `--API_Key`, `api‐key` and `apikey` are one name. */
const letters = (name: string) =>
  name
    .replace(DASH, '')
    .replace(/[\s_.]/g, '')
    .toLowerCase();

/**
 * `--api-key` or `--admin-token`, however dashed or cased, with or without a value, and whatever
 * follows the name (`--api-key:sk_…`, `--api-keys=…`) but `-file`: refused before anything reads argv.
 */
export const isSecretFlag = (arg: string): boolean => {
  const flag = asFlag(arg);
  if (!flag.startsWith('-')) return false;
  return /^(apikey|admintoken)(?!file(=|$))/.test(letters(flag.split('=', 1)[0] as string));
};

/** Names whose value is a credential: a message never quotes such an argument's value. */
const SECRET_NAME = /key|token|secret|passw|credential|auth|bearer|session|cookie/;

/**
 * An argument as a message may quote it: `name=[redacted]` (or `name:[redacted]`) when its name
 * reads as a credential's (`api-key=…`, `—token=…`, `password:…`), else as it is.
 */
export function quotedArgument(arg: string): string {
  const [, name, sep] = /^([^=:]*)([=:])/.exec(arg) ?? [];
  if (name === undefined || sep === undefined || !SECRET_NAME.test(letters(name))) return arg;
  return `${name}${sep}[redacted]`;
}
