// The repository's source tree, for tests that read sources and docs (boundary scans, dead exports, links). The test
// runner runs a compiled copy of the tree (`.build`, JavaScript, non-code files linked to the sources), so a test
// finds the sources through the link of `package.json`, which leads here from either tree.
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Absolute path of the repository's source tree (where the `.ts` files are), from the sources or the compiled tree. */
export const SOURCE_ROOT = dirname(realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));
