// The SQL piece of the task records that both engines share: the per-service order.
import { sql, type RawBuilder } from 'kysely';
import { SERVICE_TAG_PREFIX } from './tags.ts';

/**
 * True when an earlier record (smaller `seq`) sharing one of the `service:` tags of the record `alias` is still
 * pending or processing: that record must wait for it.
 */
export function waitsForEarlier(alias: string): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (
    SELECT 1 FROM task_tags AS mine
      JOIN task_tags AS theirs ON theirs.tag = mine.tag
      JOIN tasks AS earlier ON earlier.id = theirs.task_id
    WHERE mine.task_id = ${sql.ref(`${alias}.id`)}
      AND substr(mine.tag, 1, ${sql.lit(SERVICE_TAG_PREFIX.length)}) = ${sql.lit(SERVICE_TAG_PREFIX)}
      AND earlier.seq < ${sql.ref(`${alias}.seq`)} AND earlier.status IN ('pending', 'processing'))`;
}
