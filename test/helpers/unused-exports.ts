// Lists the values shared/, panel/ and module/ export that no other file imports (shared, panel, module, bin, test):
// dead code to remove or unexport. The wire schemas (shared/wire/, panel/schemas/) are the API, exempt.
// Run: `node --import tsx test/helpers/unused-exports.ts` (prints them; exit 1 when any); the unit tier checks it too.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const SOURCE = /\.(ts|mts|js|mjs)$/;

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((entry) => {
    if (entry === 'node_modules' || entry.startsWith('.')) return [];
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return SOURCE.test(entry) && !entry.endsWith('.d.ts') ? [path] : [];
  });
}

/**
 * The values a file exports (functions, classes, constants, enums: declarations with `export`, `export { a, b }` of
 * values, `export default`), not types: an exported interface is a contract's shape (a constructor's deps) and
 * costs nothing at run time.
 */
function exportedNames(source: ts.SourceFile): string[] {
  const out: string[] = [];
  for (const stmt of source.statements) {
    if (ts.isInterfaceDeclaration(stmt) || ts.isTypeAliasDeclaration(stmt)) continue;
    const mods = ts.canHaveModifiers(stmt) ? ts.getModifiers(stmt) ?? [] : [];
    const exported = mods.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    const isDefault = mods.some((m) => m.kind === ts.SyntaxKind.DefaultKeyword);
    if (exported) {
      if (isDefault) out.push('default');
      else if (ts.isVariableStatement(stmt)) {
        for (const d of stmt.declarationList.declarations) if (ts.isIdentifier(d.name)) out.push(d.name.text);
      } else if ('name' in stmt && stmt.name && ts.isIdentifier(stmt.name as ts.Node)) out.push((stmt.name as ts.Identifier).text);
    }
    if (ts.isExportDeclaration(stmt) && !stmt.isTypeOnly && !stmt.moduleSpecifier && stmt.exportClause && ts.isNamedExports(stmt.exportClause)) {
      for (const el of stmt.exportClause.elements) if (!el.isTypeOnly) out.push(el.name.text);
    }
    if (ts.isExportAssignment(stmt)) out.push('default');
  }
  return out;
}

/** The file a relative specifier names (with or without extension), or null. */
function resolveSpec(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/** The folders whose exports are checked. */
export const CHECKED_DIRS = ['shared', 'panel', 'module'] as const;

/** Folders of wire schemas: the API the panel serves and the module's typed client reads, public by design. */
export const EXEMPT_DIRS = ['shared/wire/', 'panel/schemas/'] as const;

/**
 * Exports left in place for now, each with its reason; an entry that is no longer unused is harmless (it names
 * nothing the scan reports).
 */
export const KNOWN_UNUSED: ReadonlyMap<string, string> = new Map([
  ['module/platform/loader.ts:MODULE_NOT_LOADED', 'loader.ts is being reshaped into the platform plugin graph (issue 24 item 1)'],
]);

/** The unused exports of CHECKED_DIRS that count: wire schemas and KNOWN_UNUSED aside. */
export function deadExports(root: string): string[] {
  return unusedExports(root, [...CHECKED_DIRS]).filter((entry) => !EXEMPT_DIRS.some((dir) => entry.startsWith(dir)) && !KNOWN_UNUSED.has(entry));
}

/**
 * `file:name` for every export of a file under `dirs` that no other file of `scan` imports by name (`import { name }`,
 * `export { name } from`, `import * as ns` or `export * from` count as using every export of the target; so does a
 * dynamic `import()` of it).
 */
export function unusedExports(root: string, dirs: string | string[] = 'panel', scan = ['shared', 'panel', 'module', 'bin', 'test', 'config.ts', 'hooks.ts']): string[] {
  const files = scan.flatMap((part) => {
    const path = join(root, part);
    return existsSync(path) && statSync(path).isFile() ? [path] : sourceFiles(path);
  });
  const used = new Map<string, Set<string>>();
  const all = new Set<string>();
  const use = (target: string | null, name: string) => {
    if (!target) return;
    if (!used.has(target)) used.set(target, new Set());
    used.get(target)!.add(name);
  };
  for (const file of files) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const target = resolveSpec(file, node.moduleSpecifier.text);
        const clause = node.importClause;
        if (clause?.name) use(target, 'default');
        const bindings = clause?.namedBindings;
        if (bindings && ts.isNamespaceImport(bindings)) all.add(target ?? '');
        if (bindings && ts.isNamedImports(bindings)) for (const el of bindings.elements) use(target, (el.propertyName ?? el.name).text);
        if (!clause) all.add(target ?? '');
      } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
        const target = resolveSpec(file, node.moduleSpecifier.text);
        if (!node.exportClause || ts.isNamespaceExport(node.exportClause)) all.add(target ?? '');
        else for (const el of node.exportClause.elements) use(target, (el.propertyName ?? el.name).text);
      } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const arg = node.arguments[0];
        if (arg && ts.isStringLiteralLike(arg)) all.add(resolveSpec(file, arg.text) ?? '');
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const out: string[] = [];
  for (const file of [dirs].flat().flatMap((dir) => sourceFiles(join(root, dir)))) {
    if (all.has(file) || !file.endsWith('.ts')) continue;
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const name of exportedNames(source)) if (!used.get(file)?.has(name)) out.push(`${relative(root, file)}:${name}`);
  }
  return out.sort();
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const root = resolve(new URL('../../', import.meta.url).pathname);
  const list = deadExports(root);
  for (const entry of list) process.stdout.write(`${entry}\n`);
  process.stdout.write(`${list.length} unused export(s) in ${CHECKED_DIRS.join('/, ')}/ (wire schemas aside)\n`);
  process.exit(list.length ? 1 : 0);
}
