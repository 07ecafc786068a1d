import * as z from 'zod/mini';

/** The separators a CSV file may use: `tab` names the tab character. */
export const DELIMITERS = [',', ';', 'tab'] as const;

/** The encodings a source file may be read in (the byte order mark decides when there is one). */
export const ENCODINGS = ['utf-8', 'latin1', 'windows-1252', 'utf-16le'] as const;

const text = z.string().check(z.minLength(1));

const dateTransform = z.strictObject({
  /** Unicode date tokens as date-fns reads them: `dd.MM.yyyy`, `yyyy-MM-dd HH:mm`. */
  format: text,
  /** An IANA time zone: `Europe/Berlin`. A date without a time is that day's midnight there. */
  timeZone: text,
});

const numberTransform = z.strictObject({
  decimal: z.enum(['.', ',']),
  thousands: z.optional(z.enum(['.', ',', ' ', "'", ''])),
});

const booleanTransform = z.strictObject({
  true: z.array(z.string()).check(z.minLength(1)),
  false: z.array(z.string()).check(z.minLength(1)),
});

const emptyRule = z.enum(['absent', 'empty-string']);

/** The transforms of a field object: at most one of them. */
const TRANSFORMS = ['date', 'number', 'boolean', 'values'] as const;

const fieldObject = z
  .strictObject({
    column: z.optional(text),
    value: z.optional(z.union([z.string(), z.number(), z.boolean()])),
    date: z.optional(dateTransform),
    number: z.optional(numberTransform),
    boolean: z.optional(booleanTransform),
    values: z.optional(z.record(z.string(), z.string())),
    empty: z.optional(emptyRule),
    trim: z.optional(z.boolean()),
  })
  .check(
    z.refine((field) => (field.column === undefined) !== (field.value === undefined), {
      message: 'give exactly one of "column" and "value"',
    }),
    z.refine((field) => TRANSFORMS.filter((name) => field[name] !== undefined).length <= 1, {
      message: 'at most one transform: "date", "number", "boolean" or "values"',
    }),
  );

/** A field: the column it is read from, or an object with `column` or `value` and a transform. */
const fieldMapping = z.union([text, fieldObject]);

const common = {
  /** The column holding the record's key in your system. */
  key: text,
  /** Each field the type takes, by its SDK name: a column, or how to read it. */
  fields: z.record(z.string(), fieldMapping),
  /** What an empty cell is: the field left out (default), or an empty string. */
  empty: z.optional(emptyRule),
  /** Cells are trimmed unless false. */
  trim: z.optional(z.boolean()),
  /** This file's separator, over --delimiter and detection. */
  delimiter: z.optional(z.enum(DELIMITERS)),
  /** This file's encoding, over --encoding (a byte order mark still decides). */
  encoding: z.optional(z.enum(ENCODINGS)),
};

/**
 * `crm sync --map <file.json>`: how each type's CSV columns become its fields. The single source
 * of the mapping's rules; sync-map.schema.json (shipped for editors) is generated from it.
 */
export const SyncMapSchema = z.strictObject({
  $schema: z.optional(z.string()),
  accounts: z.optional(z.strictObject(common)),
  contacts: z.optional(z.strictObject({ ...common, accountKey: z.optional(text) })),
  opportunities: z.optional(z.strictObject({ ...common, accountKey: z.optional(text), contactKey: z.optional(text) })),
  activities: z.optional(z.strictObject({ ...common, opportunityKey: z.optional(text) })),
});

/** A mapping file as read. */
export type SyncMap = z.infer<typeof SyncMapSchema>;
/** One field of a type's mapping, as read. */
export type FieldMapping = z.infer<typeof fieldMapping>;
/** A delimiter as named: `,`, `;` or `tab`. */
export type Delimiter = (typeof DELIMITERS)[number];
/** One of {@link ENCODINGS}. */
export type Encoding = (typeof ENCODINGS)[number];
