// Row types of the tables of billing (invoices, transactions, periods, runs, outbox, credits, payment methods, settings), as both engines store them.

/** The tables of billing (invoices, transactions, periods, runs, outbox, credits, payment methods, settings) by name (added as their repositories move to the query layer). */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface BillingTables {}
