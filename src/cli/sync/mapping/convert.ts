import type { Field } from '../../commands';

/** What a cell becomes: a value, nothing (the field left out), or why the record is invalid. */
export type Read = { readonly value: unknown } | { readonly absent: true } | { readonly fault: string };

/** The most of a cell a message repeats. */
const shownCell = (cell: string): string => JSON.stringify(cell.length > 80 ? `${cell.slice(0, 80)}…` : cell);

const typesOf = (field: Field): readonly string[] =>
  typeof field.schema.type === 'string' ? [field.schema.type] : (field.schema.type ?? []);

export const takesNumber = (field: Field): boolean =>
  typesOf(field).includes('number') || typesOf(field).includes('integer');
export const takesBoolean = (field: Field): boolean => typesOf(field).includes('boolean');
export const takesDate = (field: Field): boolean => field.schema.format === 'date-time';

const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * A cell as its field's type without a transform, as the CSV columns have always been read: a
 * number where the field takes one, `true`/`false` for a boolean; anything else stays text for the
 * engine's schema to refuse. A whole number past 2^53 stays text: rounded, it would be another.
 */
export function plainValue(field: Field | undefined, cell: string): unknown {
  if (!field) return cell;
  if (takesNumber(field) && NUMBER.test(cell.trim())) {
    const value = Number(cell);
    return /^\s*[-+]?\d+\s*$/.test(cell) && !Number.isSafeInteger(value) ? cell : value;
  }
  if (takesBoolean(field)) {
    const word = cell.trim().toLowerCase();
    if (word === 'true' || word === 'false') return word === 'true';
  }
  return cell;
}

const literal = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `1.200.000,50` read with `decimal` and `thousands`; thousands groups of three digits only. */
export function numberReader(decimal: string, thousands: string | undefined): (cell: string) => Read {
  const d = literal(decimal);
  const grouped = thousands ? `\\d{1,3}(?:${literal(thousands)}\\d{3})+|` : '';
  const pattern = new RegExp(`^[-+]?(?:${grouped}\\d+)(?:${d}\\d+)?$|^[-+]?${d}\\d+$`);
  const said = `a number with the decimal "${decimal}"${thousands ? ` and the thousands "${thousands}"` : ''}`;
  return (cell) => {
    if (!pattern.test(cell)) return { fault: `${shownCell(cell)} is not ${said}` };
    const plain = (thousands ? cell.split(thousands).join('') : cell).replace(decimal, '.');
    const value = Number(plain);
    if (!Number.isFinite(value)) return { fault: `${shownCell(cell)} is not ${said}` };
    if (/^[-+]?\d+$/.test(plain) && !Number.isSafeInteger(value)) {
      return { fault: `${shownCell(cell)} is past 2^53: it would be sent as another number` };
    }
    return { value };
  };
}

/** `J`/`N`: each list compared without regard to case. */
export function booleanReader(yes: readonly string[], no: readonly string[]): (cell: string) => Read {
  const truths = new Set(yes.map((word) => word.trim().toLowerCase()));
  const falsehoods = new Set(no.map((word) => word.trim().toLowerCase()));
  return (cell) => {
    const word = cell.trim().toLowerCase();
    if (truths.has(word)) return { value: true };
    if (falsehoods.has(word)) return { value: false };
    return { fault: `${shownCell(cell)} is neither true (${yes.join(', ')}) nor false (${no.join(', ')})` };
  };
}

/** A value map, matched trimmed and without regard to case; a Map, so that no key reads a prototype's. */
export function valuesReader(map: Readonly<Record<string, string>>): (cell: string) => Read {
  const entries = Object.entries(map);
  const table = new Map(entries.map(([from, to]) => [from.trim().toLowerCase(), to]));
  const known = entries
    .slice(0, 10)
    .map(([from]) => JSON.stringify(from))
    .join(', ');
  const more = entries.length > 10 ? `, and ${entries.length - 10} more` : '';
  return (cell) => {
    const to = table.get(cell.trim().toLowerCase());
    return to === undefined
      ? { fault: `${shownCell(cell)} is not in the values map (${known}${more})` }
      : { value: to };
  };
}
