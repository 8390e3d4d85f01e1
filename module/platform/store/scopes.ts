// Every migration scope of the platform database, in the order a fresh database is built: the platform's own tables,
// then those owned by other parts (task records, module logs, module versions, web sessions). Modules' scopes come from the host.
import { MODULE_LOG_MIGRATIONS } from './query/repositories/module-logs.ts';
import { MODULE_VERSION_MIGRATIONS } from './query/repositories/module-versions.ts';
import { TASK_MIGRATIONS } from '../../task/task-schema.ts';
import { PLATFORM_MIGRATIONS } from './migrations.ts';
import { SESSION_MIGRATIONS, SESSIONS_SCOPE } from '../services/sessions.ts';
import { PLATFORM_SCOPE, type Migration } from './migrator.ts';

/** Scope name → its ordered migrations. */
export const PLATFORM_DB_SCOPES: ReadonlyArray<readonly [scope: string, migrations: readonly Migration[]]> = [
  [PLATFORM_SCOPE, PLATFORM_MIGRATIONS],
  ['tasks', TASK_MIGRATIONS],
  ['module-logs', MODULE_LOG_MIGRATIONS],
  ['module-versions', MODULE_VERSION_MIGRATIONS],
  [SESSIONS_SCOPE, SESSION_MIGRATIONS],
];
