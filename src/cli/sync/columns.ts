import { type Command, commands, type Field } from '../commands';

/** The four lists of a sync source, parents first, spelt as `crm-integration-sdk/sync` spells them. */
export const SOURCE_TYPES = ['accounts', 'contacts', 'opportunities', 'activities'] as const;

/** One of {@link SOURCE_TYPES}. */
export type SourceType = (typeof SOURCE_TYPES)[number];

/** The reference columns of each type: a parent by its key in the source (issue 35's records). */
const REFERENCES: Readonly<Record<SourceType, readonly string[]>> = {
  accounts: [],
  contacts: ['accountKey'],
  opportunities: ['accountKey', 'contactKey'],
  activities: ['opportunityKey'],
};

/** The columns a CSV file of one type may have: `key`, its reference columns, and its create fields. */
export interface TypeColumns {
  readonly type: SourceType;
  readonly references: readonly string[];
  /** The create command's fields, by SDK name: the same schemas as `crm <type> create`. */
  readonly fields: readonly Field[];
  /** Every column name, `key` first. */
  readonly names: readonly string[];
}

const createOf = (type: SourceType): Command =>
  commands.find((command) => command.namespace === type && command.method === 'create') as Command;

/** What a CSV file of `type` may hold, read from the endpoint table's create row. */
export function columnsOf(type: SourceType): TypeColumns {
  const { fields } = createOf(type);
  const references = REFERENCES[type];
  return { type, references, fields, names: ['key', ...references, ...fields.map((field) => field.name)] };
}
