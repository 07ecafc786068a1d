/**
 * The journal's tables, format 1, in the schema `s` (quoted). Created in one transaction by the
 * first worker that opens the journal. `claims` is the fleet's: one row per key being created.
 * Every string the journal is given is stored as its UTF-8 bytes (bytea): Postgres text holds no
 * NUL, and a key, an id or a hash may. `convert_from(key, 'UTF8')` reads one in psql.
 */
export const schemaSql = (s: string, format: number): string => `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE ${s}.format (
  format integer NOT NULL,
  written_by text NOT NULL,
  at timestamptz NOT NULL DEFAULT pg_catalog.now()
);
INSERT INTO ${s}.format (format, written_by) VALUES (${format}, 'crm-integration-sdk');
CREATE TABLE ${s}.entries (
  tenant bytea NOT NULL, type text NOT NULL, key bytea NOT NULL,
  state text NOT NULL, crm_id bytea, hash bytea NOT NULL, data bytea NOT NULL,
  attempted_at bigint, request_id bytea, run_id bytea NOT NULL,
  PRIMARY KEY (tenant, type, key)
);
CREATE INDEX entries_pending ON ${s}.entries (tenant) WHERE state IN ('sending', 'inDoubt');
CREATE TABLE ${s}.locks (tenant bytea PRIMARY KEY, run_id bytea NOT NULL, at timestamptz NOT NULL);
CREATE TABLE ${s}.claims (
  tenant bytea NOT NULL, type text NOT NULL, key bytea NOT NULL,
  run_id bytea NOT NULL, fence bigint NOT NULL, expires_at timestamptz NOT NULL,
  PRIMARY KEY (tenant, type, key)
);
CREATE SEQUENCE ${s}.fences;
${runsSql(s)}
`;

/**
 * The history of runs: one row per run, written at its start, as it goes and at its end (a run
 * not ended has no `finished_at`); times are epoch milliseconds of the run's host, but
 * `stamped_at`, the server's time of the last write, by which a reader tells a live run. Added to a
 * journal of format 1 made before it by the first worker that opens it (older workers ignore it).
 */
export const runsSql = (s: string): string => `
CREATE TABLE IF NOT EXISTS ${s}.runs (
  tenant bytea NOT NULL, run_id bytea NOT NULL, started_at bigint NOT NULL, finished_at bigint,
  recorded_at bigint NOT NULL, summary bytea NOT NULL,
  stamped_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
  PRIMARY KEY (tenant, run_id)
);
`;

/**
 * Generations (generations.ts): a row per generation of a tenant, a row per slice finished (the
 * lists it read to their end, with their unusable keys), and a row per key a slice read, kept
 * until the generation is done, superseded or expired. `removal_fence` is the removal's claim, as
 * a create's, from the `fences` sequence. Added to a journal of format 1 made before it by the
 * first worker that opens it (older workers ignore it).
 */
export const generationsSql = (s: string): string => `
CREATE TABLE IF NOT EXISTS ${s}.generations (
  tenant bytea NOT NULL, id bytea NOT NULL, slices integer NOT NULL, state text NOT NULL,
  started_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
  remover bytea, removal_fence bigint, removal_expires_at timestamptz,
  PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS ${s}.generation_slices (
  tenant bytea NOT NULL, id bytea NOT NULL, slice integer NOT NULL, run_id bytea NOT NULL,
  types text[] NOT NULL, unusable integer[] NOT NULL,
  finished_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
  PRIMARY KEY (tenant, id, slice)
);
CREATE TABLE IF NOT EXISTS ${s}.generation_keys (
  tenant bytea NOT NULL, id bytea NOT NULL, type text NOT NULL, key bytea NOT NULL,
  PRIMARY KEY (tenant, id, type, key)
);
`;
