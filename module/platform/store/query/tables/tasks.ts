// Row types of the tables of the task queue (task records, the embedded queue), as both engines store them.

/** The tables of the task queue (task records, the embedded queue) by name (added as their repositories move to the query layer). */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface TaskTables {}
