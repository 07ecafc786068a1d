// crm-integration-sdk/postgres: the sync journal of a fleet of workers, in Postgres (README.md,
// "Syncing with many workers"). pg is not imported: the caller's pool is passed in.
export type { PostgresPool, PostgresPoolClient } from './pool';
export { type PostgresJournalOptions, postgresJournal } from './postgres-journal';
