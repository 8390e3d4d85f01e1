// The firewall's global part: the settings (filter policies, ip_forward, internal traffic) and the operator's rules in
// `VPNHOST-IN`, with the system chains `VPNHOST-IN-SYS` and `VPNHOST-OUT` that every server change rewrites too.
import { E } from '../../../shared/wire/error-texts.ts';
import { IN_CHAIN, IN_SYS_CHAIN, OUT_CHAIN } from '../render/firewall-chains.ts';
import { emptyPlan, type RestorePlan } from '../render/firewall-restore.ts';
import {
  renderFilterRule,
  renderInput,
  renderOutput,
  renderServerChains,
  renderSystemInput,
  type GlobalRuleInput,
} from '../render/firewall-rules.ts';
import type { CountedSnapshot } from '../render/parse-iptables-save-counters.ts';
import type { FirewallWriter } from './firewall-backend.ts';
import { checkConf, checkFilterRule, type NormalServer } from './firewall-checks.ts';
import { CONTROLPANEL_RULE, FirewallError, type Family, type FilterRule, type FirewallConf, type RulePosition } from './firewall.ts';
import { FORWARD_KEYS } from './firewall-reads.ts';

/** The built-in filter chains whose policy the settings choose (and a reset sets back to ACCEPT). */
export const POLICY_CHAINS = ['INPUT', 'FORWARD', 'OUTPUT'];

/**
 * The global settings and operator rules as last ensured, and the writes that keep them live. The engine holds one
 * and serialises every call; the servers are passed in, as the system chains carry their listen ports.
 */
export class GlobalFilter {
  private conf: FirewallConf | null = null;
  private rules: FilterRule[] = [];

  constructor(
    private readonly writer: FirewallWriter,
    private readonly families: Family[],
    private readonly apiPort: number | null,
  ) {}

  /** The global `internal_traffic`: true until the first {@link ensure}. */
  get internalTraffic(): boolean {
    return this.conf?.internal_traffic ?? true;
  }

  /**
   * Checks and applies the settings and the whole rule list (nothing is written when a check fails): the servers'
   * global internal-traffic switch, ip_forward, then per family the global chains with the rules, the servers'
   * filter chains when internal traffic changed, and the filter policies.
   */
  async ensure(conf: FirewallConf, rules: FilterRule[], servers: NormalServer[]): Promise<void> {
    const checked = checkConf(conf);
    const list = checkRuleList(rules);
    const internalChanged = this.internalTraffic !== checked.internal_traffic;
    this.conf = checked;
    this.rules = list;
    for (const server of servers) server.input.globalInternalTraffic = checked.internal_traffic;
    for (const key of FORWARD_KEYS.slice(0, this.families.includes(6) ? 2 : 1)) {
      await this.writer.sysctl(key, checked.ip_forward ? '1' : '0');
    }
    for (const family of this.families) {
      const live = await this.writer.snapshot(family);
      const plan = emptyPlan();
      this.planChains(plan, live, family, servers, true);
      if (internalChanged) {
        for (const server of servers) {
          plan.chains.push(...renderServerChains(server.input, family).filter((c) => c.table === 'filter'));
        }
      }
      for (const chain of POLICY_CHAINS) {
        const key = `policy_${chain.toLowerCase()}` as 'policy_input' | 'policy_forward' | 'policy_output';
        plan.policies.push({ table: 'filter', chain, policy: checked[key] });
      }
      await this.writer.write(family, live, plan);
    }
  }

  /** Adds one operator rule at the top (after the `system_CONTROLPANEL` jump) or the end of `VPNHOST-IN`. */
  async addRule(rule: FilterRule, position: RulePosition, servers: NormalServer[]): Promise<void> {
    const checked = checkFilterRule(rule);
    if (this.rules.some((r) => r.name === checked.name)) throw new FirewallError(E.FW_RULE_EXISTS);
    const after = position === 'top' ? [checked, ...this.rules] : [...this.rules, checked];
    await this.writeRules(after, servers, (family) => {
      const line = renderFilterRule(checked, family);
      if (line === null) return [];
      return [position === 'top' ? `-I ${IN_CHAIN.chain} 2${line.slice(2 + IN_CHAIN.chain.length + 1)}` : line];
    });
    this.rules = after;
  }

  /** Deletes one operator rule by name; `system_CONTROLPANEL` is built in and stays. */
  async deleteRule(name: string, servers: NormalServer[]): Promise<void> {
    if (name === CONTROLPANEL_RULE) throw new FirewallError(E.FW_RULE_BUILTIN);
    const rule = this.rules.find((r) => r.name === name);
    if (!rule) throw new FirewallError(E.FW_RULE_NOT_FOUND);
    const after = this.rules.filter((r) => r !== rule);
    await this.writeRules(after, servers, (family) => {
      const line = renderFilterRule(rule, family);
      return line === null ? [] : [`-D${line.slice(2)}`];
    });
    this.rules = after;
  }

  /**
   * Puts the global chains into a plan: `VPNHOST-IN-SYS` (system_CONTROLPANEL with every listen port), `VPNHOST-OUT`,
   * and `VPNHOST-IN` — rewritten only with `withRules` (ensure, rule changes) or when missing, so a server change
   * before the boot-time ensure never drops live operator rules. Policies not yet known are read from the live chains.
   */
  planChains(plan: RestorePlan, live: CountedSnapshot, family: Family, servers: NormalServer[], withRules: boolean): void {
    this.planChainsWith(this.rules, plan, live, family, servers, withRules);
  }

  /** Forgets the settings and rules (everything owned was removed). */
  clear(): void {
    this.conf = null;
    this.rules = [];
  }

  private planChainsWith(
    rules: FilterRule[],
    plan: RestorePlan,
    live: CountedSnapshot,
    family: Family,
    servers: NormalServer[],
    withRules: boolean,
  ): void {
    const policy = (chain: string): 'ACCEPT' | 'DROP' => (live.get('filter')?.get(chain)?.policy === 'DROP' ? 'DROP' : 'ACCEPT');
    const g: GlobalRuleInput = {
      apiPort: this.apiPort,
      listenPorts: servers.map((s) => s.listenPort),
      policyInput: this.conf?.policy_input ?? policy('INPUT'),
      policyOutput: this.conf?.policy_output ?? policy('OUTPUT'),
      rules,
    };
    plan.chains.push({ table: 'filter', chain: IN_SYS_CHAIN, rules: renderSystemInput(g) });
    if (withRules || !live.get('filter')?.has(IN_CHAIN.chain)) {
      plan.chains.push({ table: 'filter', chain: IN_CHAIN.chain, rules: renderInput(g, family) });
    }
    plan.chains.push({ table: 'filter', chain: OUT_CHAIN.chain, rules: renderOutput(g) });
    plan.hooks.push(IN_CHAIN, OUT_CHAIN);
  }

  /**
   * Writes an operator-rule change: incrementally (`-I VPNHOST-IN 2` / `-A` / `-D` from `step`, other rules keep
   * their counters) when the live chain is exactly what the current rules render, else a refill with `after`.
   */
  private async writeRules(after: FilterRule[], servers: NormalServer[], step: (family: Family) => string[]): Promise<void> {
    for (const family of this.families) {
      const live = await this.writer.snapshot(family);
      if (inputChainRenders(live, this.rules, family)) {
        const lines = step(family);
        if (lines.length > 0) await this.writer.restore(family, `*filter\n${lines.join('\n')}\nCOMMIT\n`);
        continue;
      }
      const plan = emptyPlan();
      this.planChainsWith(after, plan, live, family, servers, true);
      await this.writer.write(family, live, plan);
    }
  }
}

/** Checks every rule of a full list; refuses a name given twice. */
function checkRuleList(rules: FilterRule[]): FilterRule[] {
  const list = rules.map((r) => checkFilterRule(r));
  const names = new Set<string>();
  for (const rule of list) {
    if (names.has(rule.name)) throw new FirewallError(E.FW_RULE_EXISTS);
    names.add(rule.name);
  }
  return list;
}

/** Whether the live `VPNHOST-IN` of the family is exactly what `rules` render. */
function inputChainRenders(live: CountedSnapshot, rules: FilterRule[], family: Family): boolean {
  const current = live.get('filter')?.get(IN_CHAIN.chain)?.rules.map((r) => r.rule);
  const expected = renderInput({ apiPort: null, listenPorts: [], policyInput: 'ACCEPT', policyOutput: 'ACCEPT', rules }, family);
  return current !== undefined && current.length === expected.length && current.every((r, i) => r === expected[i]);
}
