// Row types of the tables of the task queue (task records, the embedded queue), as both engines store them. They are
// defined beside the task records (module/task/task-schema.ts: the task package imports nothing of the platform).
export type { TaskTables, TasksTable } from '../../../../task/task-schema.ts';
