// Pure `iptables-restore --noflush` payload removing everything the panel owns (the escape hatch), nothing else.
import { CHAIN_PREFIX as OWNED_CHAIN_PREFIX } from './firewall-chains.ts';
import type { IptablesSnapshot } from './parse-iptables-save.ts';

/** Prefix of the comment tagging rules the panel writes (`vpnhost:rule:<name>`, and `vpnhost:<if>` of old releases). */
const RULE_COMMENT_PREFIX = 'vpnhost:';

/** What a reset removes (or would remove), per table. */
export interface OwnedRulesReset {
  /** The payload for `iptables-restore --noflush` (or `ip6tables-restore`); null when nothing is owned. */
  payload: string | null;
  /** Human-readable lines: `<table>: -A <rule>` for each rule deleted, `<table>: chain <NAME> (<n> rules)`. */
  removed: string[];
  /** Rules deleted from chains the panel does not own (jumps into its chains, rules with its comment). */
  rules: number;
  /** Chains flushed and deleted. */
  chains: number;
}

const JUMP = new RegExp(`\\s-[jg] ${OWNED_CHAIN_PREFIX}\\S*`);
const COMMENT = new RegExp(`--comment "?${RULE_COMMENT_PREFIX}`);

/**
 * Renders the reset of every table of a save dump: rules of other chains that jump (`-j`/`-g`) to a
 * `VPNHOST-*` chain or carry a `vpnhost:` comment are deleted (`-D`), then every `VPNHOST-*` chain is flushed
 * (`-F`) and deleted (`-X`) — all flushes before any delete, so jumps between owned chains never block a delete.
 * Rules and chains of other software are not named in the payload, so they stay exactly as they are.
 */
export function renderOwnedRulesReset(snapshot: IptablesSnapshot): OwnedRulesReset {
  const blocks: string[] = [];
  const removed: string[] = [];
  let rules = 0;
  let chains = 0;
  for (const [table, saved] of snapshot) {
    const owned = [...saved.chains].filter((c) => c.startsWith(OWNED_CHAIN_PREFIX));
    const ownedSet = new Set(owned);
    const foreign = saved.rules.filter((rule) => {
      const chain = rule.split(' ')[1] ?? '';
      return !ownedSet.has(chain) && (JUMP.test(rule) || COMMENT.test(rule));
    });
    if (owned.length === 0 && foreign.length === 0) continue;
    const lines = [`*${table}`, ...foreign.map((rule) => `-D${rule.slice(2)}`)];
    for (const rule of foreign) removed.push(`${table}: ${rule}`);
    for (const chain of owned) {
      const count = saved.rules.filter((rule) => rule.startsWith(`-A ${chain} `)).length;
      removed.push(`${table}: chain ${chain} (${count} rule${count === 1 ? '' : 's'})`);
      lines.push(`-F ${chain}`);
    }
    lines.push(...owned.map((chain) => `-X ${chain}`), 'COMMIT');
    blocks.push(lines.join('\n'));
    rules += foreign.length;
    chains += owned.length;
  }
  return { payload: blocks.length > 0 ? `${blocks.join('\n')}\n` : null, removed, rules, chains };
}
