import type { Read } from './convert';

/** date-fns and @date-fns/tz, loaded only when a mapping has a date (devDependencies bundled into crm). */
async function library() {
  const [{ format, formatISO, isValid, parse }, { tz, TZDate }] = await Promise.all([
    import('date-fns'),
    import('@date-fns/tz'),
  ]);
  return { format, formatISO, isValid, parse, tz, TZDate };
}

type Library = Awaited<ReturnType<typeof library>>;

/** Whether `zone` is an IANA time zone this Node knows (Intl refuses any other). */
export function knownZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Why `pattern` cannot read a date, or undefined: date-fns refuses an unknown letter, and a
 * pattern without a year, a month and a day would fill them from today.
 */
function patternProblem(lib: Library, pattern: string): string | undefined {
  try {
    lib.format(new Date(0), pattern);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  // Letters outside quotes are the tokens.
  const tokens = pattern.replace(/'[^']*'/g, '');
  if (!/[yu]/.test(tokens) || !/[ML]/.test(tokens) || !/d/.test(tokens)) {
    return 'it needs a year (yyyy), a month (MM) and a day (dd)';
  }
  return undefined;
}

/** A reader of dates as `pattern` in `zone`, sent as ISO 8601 with the zone's offset. */
export type DateReader = (cell: string) => Read;

/** Makes date readers: the library is loaded once, on the first. */
export async function dateReaders(): Promise<{
  problem: (pattern: string) => string | undefined;
  reader: (pattern: string, zone: string) => DateReader;
}> {
  const lib = await library();
  return {
    problem: (pattern) => patternProblem(lib, pattern),
    reader: (pattern, zone) => {
      const inZone = lib.tz(zone);
      const inUtc = lib.tz('UTC');
      const reference = new lib.TZDate(2000, 0, 1, zone);
      return (cell) => {
        const said = `${JSON.stringify(cell.slice(0, 80))} is not a date as "${pattern}"`;
        const date = lib.parse(cell, pattern, reference, { in: inZone });
        if (!lib.isValid(date)) return { fault: said };
        const year = date.getFullYear();
        if (year < 1000 || year > 9999) return { fault: `${said} (the year ${year} has not four digits)` };
        // A time the clock skips (02:30 on the night summer time starts) reads as another hour.
        const wall = lib.parse(cell, pattern, new lib.TZDate(2000, 0, 1, 'UTC'), { in: inUtc });
        if (wall.getHours() !== date.getHours() || wall.getMinutes() !== date.getMinutes()) {
          return { fault: `${JSON.stringify(cell.slice(0, 80))} does not exist in ${zone}: the clock skips it` };
        }
        return { value: lib.formatISO(date) };
      };
    },
  };
}
