// Module boundaries (issue 22 item 2): no file under module/modules/<Type>/<Name>/ imports another module's folder (a
// module reaches another only through a capability of module/contract/capabilities.ts), no module's SQL names another
// module's or the platform's tables (platform data comes through the host's read API), and the raw database handle
// is in no module file (a module gets its module store, `ExtensionEnv.store`).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { migratePlatform } from '../../../module/platform/store/db.ts';
import { sourceFiles, specifiers } from '../../helpers/import-specifiers.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const modulesDir = join(root, 'module/modules');

/** `<Type>/<Name>` of a path under module/modules, or null outside. */
function moduleOf(path: string): string | null {
  const rel = relative(modulesDir, path);
  const parts = rel.split('/');
  return rel.startsWith('..') || parts.length < 3 ? null : `${parts[0]}/${parts[1]}`;
}

const files = sourceFiles(modulesDir);
const sources = new Map(files.map((file) => [file, readFileSync(file, 'utf8')]));

/** Tables a module's own migrations create (or take over by renaming). */
function ownTables(): Map<string, Set<string>> {
  const owned = new Map<string, Set<string>>();
  for (const [file, text] of sources) {
    const module = moduleOf(file)!;
    for (const match of text.matchAll(/(?:CREATE TABLE(?: IF NOT EXISTS)?|RENAME TO)\s+([a-z_][a-z0-9_]*)/g)) {
      if (!owned.has(module)) owned.set(module, new Set());
      owned.get(module)!.add(match[1]);
    }
  }
  return owned;
}

/** Tables of a fresh platform database (every platform scope migrated). */
function platformTables(): Set<string> {
  const db = new Database(':memory:');
  try {
    migratePlatform(db);
    return new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>).map((r) => r.name));
  } finally {
    db.close();
  }
}

/**
 * Tables named after an SQL keyword (FROM, JOIN, INTO, UPDATE, TABLE) in a file, outside comments. Shown to work on
 * the forms the modules use (multi-line template strings, aliases).
 */
function tablesNamed(text: string): Set<string> {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return new Set([...code.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+([a-z_][a-z0-9_]*)/g)].map((m) => m[1]));
}

/**
 * Named on purpose, with the reason. VpnProduct's first migration takes over the platform's early `panels` table
 * (renaming it to its own `vpn_product_panels`), which is a one-time move of ownership, not a read of platform data.
 */
const ALLOWED: Record<string, string[]> = {
  'module/modules/Product/VpnProduct/panel-store.ts': ['panels'],
};


test('the scans see what they look for', () => {
  assert.ok(files.length > 40, `expected the module sources, found ${files.length} files`);
  assert.deepEqual([...tablesNamed('db.prepare(`SELECT s.uuid FROM services s\n  JOIN products p ON x`);\n  // FROM comments\n/* UPDATE invoices */ INSERT INTO t_1 (a)')].sort(), ['products', 'services', 't_1']);
  const owned = ownTables();
  assert.ok(owned.get('Product/VpnProduct')?.has('vpn_product_panels'), 'VpnProduct owns its panels table');
  assert.ok(owned.get('Plugin/VpnFleet')?.has('vpn_fleet_panels'), 'VpnFleet owns its snapshot table');
  const platform = platformTables();
  for (const table of ['services', 'customers', 'products', 'invoices', 'service_billing']) assert.ok(platform.has(table), `platform table ${table}`);
});

test('no file under module/modules/<Type>/<Name>/ imports another module folder', () => {
  const bad: string[] = [];
  let relativeImports = 0;
  for (const [file, text] of sources) {
    for (const spec of specifiers(text)) {
      if (!spec.startsWith('.')) continue;
      relativeImports++;
      const target = resolve(dirname(file), spec);
      const into = moduleOf(target);
      if (into && into !== moduleOf(file)) bad.push(`${relative(root, file)} imports ${spec} (module ${into})`);
    }
  }
  assert.ok(relativeImports > 100, 'the scan sees the modules’ relative imports');
  assert.deepEqual(bad, []);
});

test('no module names another module’s or the platform’s tables in SQL', () => {
  const owned = ownTables();
  const platform = platformTables();
  const found: Record<string, string[]> = {};
  for (const [file, text] of sources) {
    const module = moduleOf(file)!;
    const mine = owned.get(module) ?? new Set<string>();
    const others = new Set([...platform, ...[...owned].filter(([m]) => m !== module).flatMap(([, tables]) => [...tables])]);
    const key = relative(root, file);
    const named = [...tablesNamed(text)].filter((t) => others.has(t) && !mine.has(t) && !(ALLOWED[key] ?? []).includes(t)).sort();
    if (named.length) found[key] = named;
  }
  assert.deepEqual(found, {}, 'a module reads platform data through ExtensionEnv.platform and other modules through capabilities');
});

test('no module file holds a raw database handle: modules get their module store (ExtensionEnv.store)', () => {
  const holding = [...sources].filter(([, text]) => /better-sqlite3|\benv\.db\b|\.prepare\(|\.pragma\(/.test(text)).map(([file]) => relative(root, file)).sort();
  // VpnProduct's first migration step inspects the SQLite schema it runs on (a migration step, not a module's handle).
  assert.deepEqual(holding.filter((file) => file !== 'module/modules/Product/VpnProduct/panel-store.ts'), [], 'use the module store or the host read API');
});
