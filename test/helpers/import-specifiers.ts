// Reads the module specifiers of a source text, for the layer-boundary tests.

/** Every module specifier of `text`: static `from '...'`, bare `import '...'`, dynamic `import('...')`, `require('...')`. */
export function specifiers(text: string): string[] {
  const out: string[] = [];
  const patterns = [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"`]([^'"`]+)['"`]\s*\)/g, /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const pattern of patterns) for (const match of text.matchAll(pattern)) out.push(match[1]);
  return out;
}
