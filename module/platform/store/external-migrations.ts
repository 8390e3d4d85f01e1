// Migrations owned by other parts that live in the platform database: task records, module logs, module versions.
import type Database from 'better-sqlite3';
import { migrateModuleLogStore } from '../../contract/log.ts';
import { migrateModuleVersionStore } from '../../contract/versions.ts';
import { migrateTaskStore } from '../../task/task-schema.ts';

/** Each runs idempotently against the platform database. */
export const EXTERNAL_MIGRATORS: Array<(db: Database.Database) => unknown> = [
  migrateTaskStore,
  migrateModuleLogStore,
  migrateModuleVersionStore,
];
