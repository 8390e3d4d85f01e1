// The docs tree (README.md + docs/*.md): every relative link resolves to a file (and heading), the README stays short.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const pages = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Markdown text without fenced code blocks. */
function unfenced(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** Markdown text without fenced code blocks and inline code spans (links there are not links). */
function prose(text: string): string {
  return unfenced(text).replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of unfenced(readFileSync(file, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(match[1]!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Every link target `](target)` of a page (images included), external and mail links left out. */
function relativeLinks(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t));
}

test('the docs tree has the pages the README promises', () => {
  for (const page of ['panel-api', 'ikev2', 'dns', 'backups', 'otl', 'billing', 'mail', 'fleet', 'web', 'operations',
    'scaling', 'architecture', 'testing', 'configuration', 'cli']) {
    assert.ok(pages.includes(`docs/${page}.md`), `docs/${page}.md is missing`);
  }
});

test('every relative link in README.md and docs/*.md resolves to a file and, with #, to a heading', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const from = join(root, page);
    for (const link of relativeLinks(readFileSync(from, 'utf8'))) {
      checked += 1;
      const [path, anchor] = link.split('#', 2) as [string, string | undefined];
      const target = path === '' ? from : resolve(dirname(from), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push(`${page}: ${link} (no file ${relative(root, target)})`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && statSync(target).isFile() && !anchorsOf(target).has(anchor)) {
        broken.push(`${page}: ${link} (no heading #${anchor} in ${relative(root, target)})`);
      }
    }
  }
  assert.ok(checked > 100, `only ${checked} links found: the link pattern is broken`);
  assert.deepEqual(broken, []);
});

test('every docs page links back to the README contents, and the README links to every docs page', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  for (const page of pages.filter((p) => p !== 'README.md')) {
    assert.ok(readme.includes(`](${page})`), `README.md does not link ${page}`);
    const text = readFileSync(join(root, page), 'utf8');
    assert.ok(/\]\(\.\.\/README\.md(#[^)]*)?\)/.test(text), `${page} does not link back to README.md`);
  }
});

test('README.md stays the front door: under 300 lines', () => {
  const lines = readFileSync(join(root, 'README.md'), 'utf8').split('\n').length;
  assert.ok(lines < 300, `README.md has ${lines} lines`);
});
