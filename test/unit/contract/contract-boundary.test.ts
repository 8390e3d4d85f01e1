// Layer boundary: module/contract/ holds the spec's classes, types and the store interfaces modules see — nothing that
// knows SQLite or HTTP (no better-sqlite3, no web framework or client, nothing of module/platform/).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const contractDir = join(root, 'module/contract');

/** Static, bare and dynamic import specifiers of `text`. */
function specifiers(text: string): string[] {
  return [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g]
    .flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]));
}

const FORBIDDEN_PACKAGES = /^(better-sqlite3|fastify|fastify-.*|@fastify\/.*|undici|bullmq|ioredis)(\/|$)/;

test('no file under module/contract/ imports SQLite, HTTP or the platform', () => {
  const bad: string[] = [];
  for (const entry of readdirSync(contractDir)) {
    if (!entry.endsWith('.ts')) continue;
    const file = join(contractDir, entry);
    for (const spec of specifiers(readFileSync(file, 'utf8'))) {
      const target = spec.startsWith('.') ? relative(root, resolve(dirname(file), spec)) : '';
      if (FORBIDDEN_PACKAGES.test(spec) || target.startsWith('module/platform/')) bad.push(`module/contract/${entry}: ${spec}`);
    }
  }
  assert.deepEqual(bad, []);
});
