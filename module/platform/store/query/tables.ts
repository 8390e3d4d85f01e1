// The platform database as the query layer sees it (Kysely's database interface): the columns as both engines store them
// (timestamps ISO-8601 text, JSON as text, integers as numbers). Each area keeps its row types in its own file under
// tables/; a table is added there when its repository moves to the query layer.
import type { BillingTables } from './tables/billing.ts';
import type { CoreTables } from './tables/core.ts';
import type { HostTables } from './tables/host.ts';
import type { TaskTables } from './tables/tasks.ts';

export type * from './tables/core.ts';
export type * from './tables/billing.ts';
export type * from './tables/host.ts';
export type * from './tables/tasks.ts';

/** Every platform table the query layer knows. */
export interface StoreTables extends CoreTables, BillingTables, HostTables, TaskTables {}
