// Restore plans of the servers' chains and of a reset: pure functions of the live snapshot and the wanted state.
// The global chains that go into the same writes are planned by GlobalFilter (firewall-global.ts).
import { CHAIN_PREFIX, NATOUT_CHAIN, PRE_CHAIN, SERVER_TOP_CHAINS, serverChains, type OwnedChain } from '../render/firewall-chains.ts';
import { emptyPlan, type RestorePlan } from '../render/firewall-restore.ts';
import { mergeTopChain, renderServerChains, renderServerDispatch, type ServerRuleInput } from '../render/firewall-rules.ts';
import type { CountedSnapshot } from '../render/parse-iptables-save-counters.ts';
import type { Family } from './firewall.ts';
import { POLICY_CHAINS } from './firewall-global.ts';
import { TABLES } from './firewall-reads.ts';

/**
 * Puts a shared top chain with one server's lines replaced by `lines` into the plan, with its hook jump; nothing
 * when the chain is not live and would stay empty.
 */
function planTopChain(plan: RestorePlan, live: CountedSnapshot, top: OwnedChain, name: string, lines: string[]): void {
  const current = live.get(top.table)?.get(top.chain)?.rules.map((r) => r.rule) ?? [];
  const merged = mergeTopChain(current, name, lines);
  if (merged.length === 0 && !live.get(top.table)?.has(top.chain)) return;
  plan.chains.push({ table: top.table, chain: top.chain, rules: merged });
  plan.hooks.push(top);
}

/**
 * One server's chains of one family: its sub-chains when it has the family (`has`), else their removal, and its
 * lines in every top chain of the family (IPv6 has no DNAT chains).
 */
export function planServerChains(plan: RestorePlan, live: CountedSnapshot, server: ServerRuleInput, family: Family, has: boolean): void {
  if (has) plan.chains.push(...renderServerChains(server, family));
  else plan.remove.push(...serverChains(server.name));
  const dispatch = has ? renderServerDispatch(server, family) : [];
  for (const top of SERVER_TOP_CHAINS) {
    if (family === 6 && (top === PRE_CHAIN || top === NATOUT_CHAIN)) continue;
    planTopChain(plan, live, top, server.name, dispatch.find((d) => d.top === top)?.lines ?? []);
  }
}

/** A removed server: its sub-chains deleted and its lines taken out of every top chain. */
export function planServerRemoval(plan: RestorePlan, live: CountedSnapshot, name: string): void {
  plan.remove.push(...serverChains(name));
  for (const top of SERVER_TOP_CHAINS) planTopChain(plan, live, top, name, []);
}

/** Everything the panel owns in one family removed: its chains, the jumps into them, and the filter policies back to ACCEPT. */
export function planReset(live: CountedSnapshot): RestorePlan {
  const plan = emptyPlan();
  for (const table of TABLES) {
    for (const [chain, saved] of live.get(table) ?? []) {
      if (chain.startsWith(CHAIN_PREFIX)) {
        plan.remove.push({ table, chain });
        continue;
      }
      for (const { rule } of saved.rules) if (/ -j VPNHOST-\S+$/.test(rule)) plan.deleteRules.push({ table, rule });
    }
  }
  for (const chain of POLICY_CHAINS) plan.policies.push({ table: 'filter', chain, policy: 'ACCEPT' });
  return plan;
}
