// Node arguments that run one of this tree's scripts in a child process: through tsx when the tests run from the
// sources, plainly in the compiled tree the test runner uses.
import { fileURLToPath } from 'node:url';
import { TREE_MODULE_EXTENSION, treeModuleUrl } from '../../shared/tree-module.ts';

/** `node` arguments running the script at `path` (relative to `base`, an `import.meta.url`, without extension). */
export function nodeScriptArgs(path: string, base: string): string[] {
  const file = fileURLToPath(treeModuleUrl(path, base));
  return TREE_MODULE_EXTENSION === '.ts' ? ['--import', 'tsx', file] : [file];
}

/** `node` arguments evaluating `script` (an ES module's text that may import this tree's modules by `treeModuleUrl`). */
export function nodeEvalArgs(script: string): string[] {
  return [...(TREE_MODULE_EXTENSION === '.ts' ? ['--import', 'tsx'] : []), '--input-type=module', '-e', script];
}
