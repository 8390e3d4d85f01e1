// Row types of the tables of the web and module host (sessions, admin users, roles, web secrets, module logs, module switches and instances), as both engines store them.

/** The tables of the web and module host (sessions, admin users, roles, web secrets, module logs, module switches and instances) by name (added as their repositories move to the query layer). */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface HostTables {}
