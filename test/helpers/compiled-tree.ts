// The compiled tree the test runner runs: the repository mirrored into one directory with every TypeScript file turned
// into JavaScript (esbuild, one file per file, relative `.ts` specifiers rewritten to `.js`), code files (.js, .mjs)
// copied and everything else linked. Each test file is its own node process; without the tsx loader a process that
// imports the platform spends about half the CPU it does under tsx (the loader's hooks see every import, packages
// included), and the runner starts some 300 such processes plus the CLI children they spawn.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { build, type Plugin } from 'esbuild';

/** Top-level entries never mirrored: the compiled tree itself, git's store, packages (found from the tree by walking up). */
const NOT_MIRRORED = new Set(['.build', '.git', 'node_modules']);
/** Files copied, not linked: code whose `import.meta.url` must lie inside the compiled tree. */
const COPIED = new Set(['.js', '.mjs', '.cjs']);

/** What `compileTree` made, for the runner's log line. */
export interface CompiledTree {
  /** The compiled tree's root: the repository's paths hold below it, `.ts` as `.js`. */
  root: string;
  compiled: number;
  ms: number;
}

/** Whether `dir` holds a TypeScript or JavaScript file at any depth (such a directory is mirrored, others linked). */
function holdsCode(dir: string): boolean {
  return readdirSync(dir, { withFileTypes: true }).some((entry) =>
    entry.isDirectory() ? holdsCode(join(dir, entry.name)) : /\.(ts|js|mjs|cjs)$/.test(entry.name));
}

/** Mirrors `dir` (relative to `source`) into `out`: TypeScript files are collected, code copied, the rest linked. */
function mirror(source: string, out: string, dir: string, entries: string[]): void {
  mkdirSync(join(out, dir), { recursive: true });
  for (const entry of readdirSync(join(source, dir), { withFileTypes: true })) {
    if (dir === '' && NOT_MIRRORED.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (holdsCode(join(source, path))) mirror(source, out, path, entries);
      else symlinkSync(join(source, path), join(out, path));
    } else if (entry.name.endsWith('.ts')) {
      if (!entry.name.endsWith('.d.ts')) entries.push(join(source, path));
    } else if (COPIED.has(extname(entry.name))) {
      copyFileSync(join(source, path), join(out, path));
    } else {
      symlinkSync(join(source, path), join(out, path));
    }
  }
}

/** Leaves every import as it is written, except that a relative `.ts` specifier names the compiled `.js` file. */
const keepImportsExternal: Plugin = {
  name: 'keep-imports-external',
  setup(on) {
    on.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const relativeTs = /^\.{1,2}\//.test(args.path) && args.path.endsWith('.ts');
      return { path: relativeTs ? `${args.path.slice(0, -3)}.js` : args.path, external: true };
    });
  },
};

/** Whether process `pid` is alive (a compiled tree named by a dead runner's pid is left over and removed). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Compiles the repository at `source` into `<source>/.build/<pid>` and answers where and how much. Each runner has
 * its own tree (two `npm test` in one checkout do not replace each other's files) and removes it when done
 * (`removeTree`); trees of runners that died are removed here. Bundling is on only so that esbuild runs the resolve
 * hook that rewrites specifiers; every import stays external, so each output file holds exactly its own file's code.
 * The tree lies inside the repository so that packages resolve from `node_modules` as they do for the sources.
 */
export async function compileTree(source: string): Promise<CompiledTree> {
  const started = performance.now();
  const builds = join(source, '.build');
  for (const name of existsSync(builds) ? readdirSync(builds) : []) {
    if (!/^\d+$/.test(name) || !alive(Number(name))) rmSync(join(builds, name), { recursive: true, force: true });
  }
  const out = join(builds, String(process.pid));
  const entries: string[] = [];
  mirror(source, out, '', entries);
  await build({
    entryPoints: entries,
    outdir: out,
    outbase: source,
    bundle: true,
    plugins: [keepImportsExternal],
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // classes and functions keep their names (a module's name is its class's); bundling may rename a class that
    // refers to itself
    keepNames: true,
    sourcemap: 'linked',
    logLevel: 'error',
  });
  return { root: out, compiled: entries.length, ms: performance.now() - started };
}

/** Removes a compiled tree once its runner is done with it. */
export function removeTree(tree: CompiledTree): void {
  rmSync(tree.root, { recursive: true, force: true });
}

/** The source file a path in `tree` stands for (`.build/<pid>/test/x.test.js` → `test/x.test.ts`), for messages. */
export function sourcePathOf(path: string, tree: CompiledTree, source: string): string {
  const rel = relative(tree.root, path);
  return rel.startsWith('..') ? relative(source, path) : rel.replace(/\.js$/, '.ts');
}
