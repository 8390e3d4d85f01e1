// Narrow page dependencies: every admin page, client-area route and page helper of the web host declares what it
// reaches (`Pick<WebDeps, ...>` or a named group of them), so its signature tells which services it can call. Only the
// registration functions, which hand the web host's dependencies to every page family, take the whole `WebDeps`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { sourceFiles } from '../../helpers/import-specifiers.ts';
import { SOURCE_ROOT } from '../../helpers/source-root.ts';

const root = SOURCE_ROOT;
const webDir = join(root, 'module/platform/web');
/** The page and route modules, and the page helpers they share. */
const scanned = [...sourceFiles(join(webDir, 'admin')), ...sourceFiles(join(webDir, 'client')), join(webDir, 'render.ts')];

/** The functions allowed to take the whole `WebDeps`, by file and name, each with the reason. */
const REGISTRATION: Record<string, string> = {
  'module/platform/web/admin/pages.ts#adminPages': 'registers every admin page family inside the admin guard',
  'module/platform/web/client/client-routes.ts#clientRoutes': 'registers the client area: auth routes, the customer guard, every route family',
};

/** The places in `type` that name `WebDeps` other than as the first type argument of `Pick`. */
function wholeWebDeps(type: ts.Node): ts.Node[] {
  const found: ts.Node[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTypeReferenceNode(node)) {
      const name = node.typeName.getText();
      if (name === 'Pick' && node.typeArguments?.[0]?.getText() === 'WebDeps') {
        node.typeArguments.slice(1).forEach(visit);
        return;
      }
      if (name === 'WebDeps') found.push(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(type);
  return found;
}

/** Every function (declaration, arrow or expression, at any depth) with a parameter typed with the whole `WebDeps`, and every type alias or interface built on it. */
function offendersOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const where = relative(root, file);
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && !ts.isFunctionTypeNode(node)) {
      const name = node.name?.getText() ?? '(anonymous)';
      const wide = node.parameters.some((param) => param.type !== undefined && wholeWebDeps(param.type).length > 0);
      if (wide && !(`${where}#${name}` in REGISTRATION)) out.push(`${where}:${line(node)} ${name} takes the whole WebDeps`);
    }
    if (ts.isTypeAliasDeclaration(node) && wholeWebDeps(node.type).length > 0) out.push(`${where}:${line(node)} type ${node.name.text} is the whole WebDeps`);
    if (ts.isInterfaceDeclaration(node) && node.heritageClauses?.some((clause) => wholeWebDeps(clause).length > 0)) {
      out.push(`${where}:${line(node)} interface ${node.name.text} extends the whole WebDeps`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

test('web pages and routes take narrow dependencies, never the whole WebDeps', () => {
  assert.ok(scanned.length > 25, `expected the admin and client page modules, found ${scanned.length} files`);
  assert.deepEqual(scanned.flatMap(offendersOf), []);
});

test('each registration function named as an exception exists and takes the whole WebDeps', () => {
  for (const key of Object.keys(REGISTRATION)) {
    const [path, name] = key.split('#');
    const text = readFileSync(join(root, path), 'utf8');
    assert.match(text, new RegExp(`export function ${name}\\(deps: WebDeps,`), `${key}: stale exception`);
  }
});

test('the scan sees a page that takes the whole WebDeps', () => {
  const probe = 'import type { WebDeps } from "../web-deps.ts";\nexport function probePage(deps: WebDeps & { extra: 1 }, app: unknown): void {}\n'
    + 'export type ProbeDeps = Pick<WebDeps, "views"> & WebDeps;\n';
  const source = ts.createSourceFile('probe.ts', probe, ts.ScriptTarget.Latest, true);
  const params = source.statements.filter(ts.isFunctionDeclaration).flatMap((fn) => fn.parameters.map((param) => param.type!));
  assert.equal(wholeWebDeps(params[0]).length, 1);
  const alias = source.statements.find(ts.isTypeAliasDeclaration)!;
  assert.equal(wholeWebDeps(alias.type).length, 1);
  const narrow = ts.createSourceFile('narrow.ts', 'type A = Pick<WebDeps, "views" | "signer">;', ts.ScriptTarget.Latest, true);
  assert.equal(wholeWebDeps(narrow.statements.filter(ts.isTypeAliasDeclaration)[0].type).length, 0);
});
