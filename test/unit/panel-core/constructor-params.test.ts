// No constructor in panel/, module/ or shared/ takes more than a handful of parameters: collaborators come as one
// named-deps object.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
/** The most parameters a constructor may take. */
const HANDFUL = 4;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sources(path);
    return entry.endsWith('.ts') ? [path] : [];
  });
}

test(`every constructor under panel/, module/ and shared/ takes at most ${HANDFUL} parameters`, () => {
  const offenders: string[] = [];
  let seen = 0;
  for (const file of ['panel', 'module', 'shared'].flatMap((dir) => sources(join(root, dir)))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isConstructorDeclaration(node)) {
        seen++;
        if (node.parameters.length > HANDFUL) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          offenders.push(`${relative(root, file)}:${line + 1} (${node.parameters.length} parameters)`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  assert.ok(seen > 100, `found ${seen} constructors`);
  assert.deepEqual(offenders, []);
});
