// Modules of this tree named at run time (a module class by its folder, a worker's entry): their files end in `.ts`
// when the tree runs from its sources under tsx and in `.js` in a compiled tree (the test runner's `.build`).

/** The extension this tree's own modules have where this file runs: `.ts` from the sources, `.js` compiled. */
export const TREE_MODULE_EXTENSION = import.meta.url.endsWith('.ts') ? '.ts' : '.js';

/**
 * The URL of one of this tree's modules, `path` relative to `base` (an `import.meta.url`) and written without its
 * extension: `treeModuleUrl('../modules/Product/VpnProduct/index', import.meta.url)`.
 */
export function treeModuleUrl(path: string, base: string): string {
  return new URL(`${path}${TREE_MODULE_EXTENSION}`, base).href;
}
