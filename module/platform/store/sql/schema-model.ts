// The engine-neutral model of a schema, read from an SQLite database (its catalogue and pragmas): the one migration
// history of the platform is written for SQLite, and PostgreSQL's DDL is rendered from the model it produces.
import type Database from 'better-sqlite3';

/** One column: SQLite's declared type, NOT NULL, default expression text (null: none), case-insensitive collation. */
export interface ColumnModel {
  name: string;
  type: string;
  notNull: boolean;
  defaultSql: string | null;
  nocase: boolean;
}

export interface ForeignKeyModel {
  columns: string[];
  table: string;
  references: string[];
}

/** A UNIQUE constraint or index; `where` is the partial index condition (indexes only). */
export interface IndexModel {
  name: string;
  table: string;
  columns: string[];
  unique: boolean;
  where: string | null;
}

export interface TableModel {
  name: string;
  columns: ColumnModel[];
  primaryKey: string[];
  /** `INTEGER PRIMARY KEY` (a rowid alias): the engine numbers rows inserted without an id. */
  rowidAlias: boolean;
  uniques: string[][];
  checks: string[];
  foreignKeys: ForeignKeyModel[];
}

export interface SchemaModel {
  tables: TableModel[];
  indexes: IndexModel[];
}

/** Tables that belong to the SQLite engine or to the migrator itself, never part of a model. */
const SKIPPED_TABLE = /^(sqlite_|platform_migrations$)/;

/** Reads every user table and explicit index of `db` into a model (tables in creation order). */
export function readSqliteSchema(db: Database.Database): SchemaModel {
  const objects = db.prepare("SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('table', 'index') ORDER BY rowid").all() as Array<{
    type: string; name: string; tbl_name: string; sql: string | null;
  }>;
  const tables: TableModel[] = [];
  const indexes: IndexModel[] = [];
  for (const object of objects) {
    if (SKIPPED_TABLE.test(object.tbl_name)) continue;
    if (object.type === 'table') tables.push(readTable(db, object.name, object.sql ?? ''));
    else if (object.sql) indexes.push(readIndex(db, object.name, object.tbl_name, object.sql));
  }
  return { tables, indexes };
}

function readTable(db: Database.Database, name: string, sql: string): TableModel {
  const info = db.prepare('SELECT name, type, "notnull" AS nn, dflt_value, pk FROM pragma_table_info(?) ORDER BY cid').all(name) as Array<{
    name: string; type: string; nn: number; dflt_value: string | null; pk: number;
  }>;
  const definitions = splitTopLevel(sql.slice(sql.indexOf('(') + 1, sql.lastIndexOf(')')));
  const columns = info.map((c): ColumnModel => {
    const definition = definitions.find((d) => firstIdentifier(d) === c.name) ?? '';
    return { name: c.name, type: c.type.toUpperCase(), notNull: c.nn === 1 || c.pk > 0, defaultSql: c.dflt_value, nocase: /\bCOLLATE\s+NOCASE\b/i.test(definition) };
  });
  const primaryKey = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
  const uniques: string[][] = [];
  for (const index of db.prepare('SELECT name, origin FROM pragma_index_list(?) ORDER BY seq').all(name) as Array<{ name: string; origin: string }>) {
    if (index.origin === 'u') uniques.push(indexColumns(db, index.name));
  }
  uniques.reverse(); // index_list lists the newest first
  const keys = db.prepare('SELECT id, seq, "table" AS tbl, "from" AS col, "to" AS ref FROM pragma_foreign_key_list(?) ORDER BY id, seq').all(name) as Array<{
    id: number; seq: number; tbl: string; col: string; ref: string | null;
  }>;
  const foreignKeys: ForeignKeyModel[] = [];
  for (const key of keys) {
    if (key.seq === 0) foreignKeys.push({ columns: [], table: key.tbl, references: [] });
    const fk = foreignKeys[foreignKeys.length - 1];
    fk.columns.push(key.col);
    fk.references.push(key.ref ?? '');
  }
  foreignKeys.reverse();
  const checks = definitions.flatMap((d) => checkExpressions(d));
  const rowidAlias = primaryKey.length === 1 && columns.find((c) => c.name === primaryKey[0])!.type === 'INTEGER' && !/WITHOUT\s+ROWID\s*$/i.test(sql);
  return { name, columns, primaryKey, rowidAlias, uniques, checks, foreignKeys };
}

function indexColumns(db: Database.Database, index: string): string[] {
  return (db.prepare('SELECT name FROM pragma_index_info(?) ORDER BY seqno').all(index) as Array<{ name: string | null }>).map((c) => {
    if (c.name === null) throw new Error(`index ${index}: expression indexes have no portable form yet`);
    return c.name;
  });
}

function readIndex(db: Database.Database, name: string, table: string, sql: string): IndexModel {
  const where = /\)\s+WHERE\s+([\s\S]+)$/i.exec(sql);
  return { name, table, columns: indexColumns(db, name), unique: /^\s*CREATE\s+UNIQUE\b/i.test(sql), where: where ? where[1].trim() : null };
}

/** Splits `text` at commas outside parentheses, quotes and comments. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === "'" || ch === '"' || ch === '`') {
      const end = text.indexOf(ch, i + 1);
      current += text.slice(i, end + 1);
      i = end;
      continue;
    }
    if (ch === '-' && text[i + 1] === '-') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? text.length : end;
      continue;
    }
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += ch;
  }
  if (current.trim()) parts.push(current.trim());
  return parts;
}

function firstIdentifier(definition: string): string {
  return /^["`[]?([A-Za-z_][A-Za-z0-9_]*)/.exec(definition)?.[1] ?? '';
}

/** The expressions of every `CHECK (...)` in one column or table definition. */
function checkExpressions(definition: string): string[] {
  const found: string[] = [];
  const pattern = /\bCHECK\s*\(/gi;
  for (let match = pattern.exec(definition); match; match = pattern.exec(definition)) {
    let depth = 1;
    let i = match.index + match[0].length;
    const start = i;
    for (; i < definition.length && depth > 0; i++) {
      if (definition[i] === "'") i = definition.indexOf("'", i + 1);
      else if (definition[i] === '(') depth++;
      else if (definition[i] === ')') depth--;
    }
    found.push(definition.slice(start, i - 1).trim());
  }
  return found;
}
