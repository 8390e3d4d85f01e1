// Migrations owned by other parts that live in the platform database: task records, module logs, module versions.
import type Database from 'better-sqlite3';

/** Each runs idempotently against the platform database. */
export const EXTERNAL_MIGRATORS: Array<(db: Database.Database) => unknown> = [];
