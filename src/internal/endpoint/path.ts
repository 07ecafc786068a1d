import * as z from 'zod/mini';
import { minLength } from '../../schemas/length';
import { refinement } from './refinement';

/**
 * A path id: non-empty, and never `.` or `..`, which URL parsing would resolve to another
 * endpoint. Everything else is legal, because it is percent-encoded as one segment.
 */
export const PathId = z.string().check(
  minLength(1),
  refinement((id: string) => id !== '.' && id !== '..', 'Must not be "." or ".."'),
  // encodeURIComponent throws on a lone UTF-16 surrogate: such a string names no record.
  refinement((id: string) => !LONE_SURROGATE.test(id), 'Must be well-formed Unicode (no lone surrogate)'),
);

const PLACEHOLDER = /\{(\w+)\}/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The names of a path template's placeholders: `a/{id}/b` -> `['id']`. */
export const placeholdersOf = (template: string): string[] =>
  Array.from(template.matchAll(PLACEHOLDER), (m) => m[1] as string);

/**
 * A path template compiled once into a function that fills its `{name}` placeholders with
 * percent-encoded, already validated values.
 */
export function pathFiller(template: string): (values: Readonly<Record<string, string>>) => string {
  const parts = template.split(PLACEHOLDER);
  // split() with a capturing group alternates literal text and placeholder names.
  return (values) => {
    let out = parts[0] as string;
    for (let i = 1; i < parts.length; i += 2)
      out += encodeURIComponent(values[parts[i] as string] as string) + parts[i + 1];
    return out;
  };
}
