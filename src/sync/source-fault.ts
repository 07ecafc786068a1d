/**
 * A record a source adapter could not read (a date that is not one, a value no map has): the
 * engine reports it invalid with this `{ field, message }` and never sends it. A symbol of the
 * global registry, so that the crm command's bundle and the sync entry's are the same key.
 */
export const SOURCE_FAULT: unique symbol = Symbol.for('crm-integration-sdk/sync:source-fault');
