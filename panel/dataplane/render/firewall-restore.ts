// Pure `iptables-restore --noflush` payload that brings the panel's own chains from what is live to what is wanted.
import type { OwnedChain, Table } from './firewall-chains.ts';
import type { ChainContent } from './firewall-rules.ts';
import { chainRules, type CountedSnapshot } from './parse-iptables-save-counters.ts';

/** What one write should achieve, for one family. Chains not named are left alone. */
export interface RestorePlan {
  /** Chains whose full content is wanted: created when missing, flushed and refilled when different. */
  chains: ChainContent[];
  /** Chains to delete when present (flushed, then `-X`); whatever jumps to them must be rewritten or deleted too. */
  remove: Array<{ table: Table; chain: string }>;
  /** Top chains whose jump from their hook must exist exactly once (inserted at position 1 when missing). */
  hooks: OwnedChain[];
  /** Exact rules to delete (`-A ...`, every live occurrence), e.g. hook jumps on reset. */
  deleteRules: Array<{ table: Table; rule: string }>;
  /** Built-in chain policies, written only when the live one differs. */
  policies: Array<{ table: Table; chain: string; policy: 'ACCEPT' | 'DROP' }>;
}

/** An empty plan. */
export function emptyPlan(): RestorePlan {
  return { chains: [], remove: [], hooks: [], deleteRules: [], policies: [] };
}

const TABLE_ORDER: Table[] = ['mangle', 'nat', 'filter'];

/**
 * Renders the payload, per table: policy lines and declarations (a declaration in `--noflush` mode creates a
 * missing chain or flushes a present one), deletions of listed rules, the refill of every changed chain, missing
 * hook jumps (`-I HOOK 1`), duplicate hook jumps removed, and `-X` of removed chains last (nothing references
 * them by then). A table with nothing to change is left out; null when nothing changes at all. The payload is one
 * transaction per table: the kernel sees the old or the new state, never a half-written chain.
 */
export function renderFirewallRestore(live: CountedSnapshot, plan: RestorePlan): string | null {
  const blocks: string[] = [];
  for (const table of TABLE_ORDER) {
    const declare: string[] = [];
    const body: string[] = [];
    const tail: string[] = [];
    for (const p of plan.policies.filter((x) => x.table === table)) {
      if (live.get(table)?.get(p.chain)?.policy !== p.policy) declare.push(`:${p.chain} ${p.policy} [0:0]`);
    }
    for (const c of plan.chains.filter((x) => x.table === table)) {
      const current = chainRules(live, table, c.chain);
      if (current !== null && sameList(current, c.rules)) continue;
      declare.push(`:${c.chain} - [0:0]`);
      body.push(...c.rules);
    }
    const deletes: string[] = [];
    for (const d of plan.deleteRules.filter((x) => x.table === table)) {
      const chain = d.rule.split(/\s+/)[1];
      const count = (chainRules(live, table, chain) ?? []).filter((r) => r === d.rule).length;
      for (let i = 0; i < count; i++) deletes.push(`-D${d.rule.slice(2)}`);
    }
    for (const h of plan.hooks.filter((x) => x.table === table)) {
      const jump = `-A ${h.hook} -j ${h.chain}`;
      const count = (chainRules(live, table, h.hook) ?? []).filter((r) => r === jump).length;
      if (count === 0) body.push(`-I ${h.hook} 1 -j ${h.chain}`);
      for (let i = 1; i < count; i++) body.push(`-D ${h.hook} -j ${h.chain}`);
    }
    for (const r of plan.remove.filter((x) => x.table === table)) {
      if (chainRules(live, table, r.chain) === null) continue;
      declare.push(`:${r.chain} - [0:0]`);
      tail.push(`-X ${r.chain}`);
    }
    if (declare.length + deletes.length + body.length + tail.length === 0) continue;
    blocks.push([`*${table}`, ...declare, ...deletes, ...body, ...tail, 'COMMIT'].join('\n'));
  }
  return blocks.length > 0 ? `${blocks.join('\n')}\n` : null;
}

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
