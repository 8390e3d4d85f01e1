// Reads the module specifiers of a source text and lists source files, for the layer-boundary tests.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Every module specifier of `text`: static `from '...'`, bare `import '...'`, dynamic `import('...')`, `require('...')`. */
export function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) out.push(match[1]);
  return out;
}

/** Every source file (.ts .js .mjs .cjs) under `dir`, recursively. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js|mjs|cjs)$/.test(entry) ? [path] : [];
  });
}
