// Pure `iptables-restore --noflush` payload that brings one interface's rules from what is saved to what is wanted.
import { PANEL_CHAINS, ruleComment, type InterfaceRules } from './iptables-rules.ts';
import type { IptablesSnapshot } from './parse-iptables-save.ts';

/**
 * Renders the payload: per table, declare the dedicated chain when missing (never when present: in --noflush
 * mode a declaration flushes an existing chain), insert the jump from the built-in hook when missing, delete the
 * interface's current rules (found by their comment) and append the wanted ones. A table whose rules already
 * match is left out; returns null when nothing needs to change. `wanted` null removes the interface's rules.
 */
export function renderIptablesRestore(
  snapshot: IptablesSnapshot,
  iface: string,
  wanted: InterfaceRules | null,
): string | null {
  const tag = ` ${ruleComment(iface)} `;
  const blocks: string[] = [];
  for (const { table, chain, hook } of PANEL_CHAINS) {
    const saved = snapshot.get(table);
    const current = (saved?.rules ?? []).filter((rule) => rule.startsWith(`-A ${chain} `) && `${rule} `.includes(tag));
    const want = wanted?.[table] ?? [];
    if (sameList(current, want)) continue;
    const lines = [`*${table}`];
    if (want.length > 0 && !saved?.chains.has(chain)) lines.push(`:${chain} - [0:0]`);
    if (want.length > 0 && !(saved?.rules ?? []).includes(`-A ${hook} -j ${chain}`)) lines.push(`-I ${hook} 1 -j ${chain}`);
    lines.push(...current.map((rule) => `-D${rule.slice(2)}`), ...want, 'COMMIT');
    blocks.push(lines.join('\n'));
  }
  return blocks.length > 0 ? `${blocks.join('\n')}\n` : null;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
