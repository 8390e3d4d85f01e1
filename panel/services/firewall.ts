// Firewall: global conf (policies, ip_forward, internal_traffic) and the operator's INPUT rules, stored then applied.
import { checkFilterRule } from '../dataplane/firewall/firewall-checks.ts';
import {
  CONTROLPANEL_RULE,
  type FilterRule,
  type FirewallConf,
  type PortForwardRule,
  type RulePosition,
  type Verdict,
} from '../dataplane/firewall/firewall.ts';
import { dataplaneRefusal } from './refusal.ts';
import { ApiError, E, OWN } from '../http/errors.ts';
import type { TextScalar } from '../../shared/wire/common-wire.ts';
import type { FilterRuleBody, FilterRuleWire, FirewallConfBody, FirewallInfo } from '../schemas/firewall.ts';
import { toBoolean } from '../../shared/wire/form.ts';
import type { DataplaneViews } from './dataplane-sync.ts';
import type { FilterRulesRepository } from '../store/repositories/filter-rules.ts';
import type { FirewallConfRepository } from '../store/repositories/firewall-conf.ts';
import type { ServersRepository } from '../store/repositories/servers.ts';

/** The live views of the data plane that the network-policy services read (DataplaneSync.views). */
export type PolicyViews = DataplaneViews;

/**
 * What the network-policy services need of `DataplaneSync` (the one way into the data plane): its serial lane and
 * the firewall/shaping writes. Each write throws the subsystem's `FirewallError`/`ShapingError` when refused.
 */
export interface PolicySync {
  /** The sync's lane, for the store writes; the apply methods below take it themselves (never call them inside). */
  serial<T>(task: () => Promise<T> | T): Promise<T>;
  applyForwards(serverName: string, forwards: PortForwardRule[]): Promise<void>;
  applyFirewallGlobal(conf: FirewallConf, rules: FilterRule[]): Promise<void>;
  addFilterRule(rule: FilterRule, position: RulePosition): Promise<void>;
  deleteFilterRule(name: string): Promise<void>;
  applyServerBandwidth(serverName: string): Promise<void>;
  readonly views: PolicyViews;
}

/**
 * One network-policy change at a time, in order: its checks and store write run inside the sync's lane
 * (`sync.serial`, nothing else writes the store meanwhile), then the data-plane call (which takes the sync's lane
 * itself), then, on failure, the compensating store write (again in the sync's lane). Later changes of the same
 * service wait, so a failed change is undone before the next one reads the store.
 */
export class ChangeLane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

/** Collaborators of the firewall service. */
export interface FirewallServiceDeps {
  conf: FirewallConfRepository;
  rules: FilterRulesRepository;
  servers: ServersRepository;
  sync: PolicySync;
  /** The panel's API TCP port (shown in the built-in rule), null when unknown. */
  apiPort?: number | null;
}

const RULE_NAME = /^[A-Za-z0-9]+$/;

/** Firewall operations behind /firewall. */
export class FirewallService {
  private readonly lane = new ChangeLane();

  constructor(private readonly deps: FirewallServiceDeps) {}

  /** GET /firewall/info: live versions and `ip_forward`. */
  info(): Promise<FirewallInfo> {
    return this.deps.sync.views.firewallInfo();
  }

  /** GET /firewall/conf: the stored settings. */
  getConf(): FirewallConf {
    return this.deps.conf.getFirewallConf();
  }

  /**
   * PUT /firewall/conf: every field optional (absent ones keep their value); the flags first, then the policies in
   * the spec's order of texts (INPUT, FORWARD, OUTPUT). Nothing is written before every check passed; a data-plane
   * failure puts the old settings back (store and data plane).
   */
  updateConf(body: FirewallConfBody): Promise<void> {
    const { conf, rules, sync } = this.deps;
    return this.lane.run(async () => {
      const { before, after } = await sync.serial(() => {
        const before = conf.getFirewallConf();
        const after: FirewallConf = { ...before };
        if (body.internal_traffic !== undefined) after.internal_traffic = flag(body.internal_traffic, OWN.WRONG_INTERNAL_TRAFFIC);
        if (body.ip_forward !== undefined) after.ip_forward = flag(body.ip_forward, OWN.WRONG_IP_FORWARD);
        if (body.policy_input !== undefined) after.policy_input = policy(body.policy_input, E.FW_POLICY_INPUT);
        if (body.policy_forward !== undefined) after.policy_forward = policy(body.policy_forward, E.FW_POLICY_FORWARD);
        if (body.policy_output !== undefined) after.policy_output = policy(body.policy_output, E.FW_POLICY_OUTPUT);
        conf.setFirewallConf(after);
        return { before, after };
      });
      try {
        await sync.applyFirewallGlobal(after, rules.listFilterRules());
      } catch (err) {
        await sync.serial(() => conf.setFirewallConf(before));
        await sync.applyFirewallGlobal(before, rules.listFilterRules()).catch(() => undefined);
        throw dataplaneRefusal(err);
      }
    });
  }

  /** GET /firewall/rules/filter: the built-in `system_CONTROLPANEL` first, then the operator's rules in order. */
  listRules(): FilterRuleWire[] {
    return [this.builtInRule(), ...this.deps.rules.listFilterRules()];
  }

  /**
   * POST /firewall/rules/filter/(top|end): checks in the spec's order (name format, name in use — the built-in's
   * name included —, chain, destination CIDR, source CIDR), then ours (action, protocol, ports, one family); the
   * rule is stored at the top or the end of the operator's list and the INPUT list re-applied. A data-plane failure
   * removes the row again.
   */
  addRule(body: FilterRuleBody, at: RulePosition): Promise<void> {
    const { rules, sync } = this.deps;
    return this.lane.run(async () => {
      const rule = await sync.serial(() => {
        const name = str(body.name);
        if (name === CONTROLPANEL_RULE || (RULE_NAME.test(name) && rules.get(name))) throw new ApiError(E.FW_RULE_EXISTS);
        if (!RULE_NAME.test(name)) throw new ApiError(E.FW_RULE_NAME);
        let checked: FilterRule;
        try {
          checked = checkFilterRule({
            name,
            action: str(body.action).toUpperCase(),
            chain: str(body.chain),
            protocol: str(body.protocol).toUpperCase(),
            s_ip: str(body.s_ip),
            d_ip: str(body.d_ip),
            s_port: str(body.s_port),
            d_port: str(body.d_port),
          });
        } catch (err) {
          throw dataplaneRefusal(err);
        }
        rules.add(checked, at);
        return checked;
      });
      try {
        await sync.addFilterRule(rule, at);
      } catch (err) {
        await sync.serial(() => rules.delete(rule.name));
        throw dataplaneRefusal(err);
      }
    });
  }

  /** DELETE /firewall/rules/filter/<rule_name>: never the built-in rule; the row comes back on a data-plane failure. */
  deleteRule(name: string): Promise<void> {
    const { rules, sync } = this.deps;
    return this.lane.run(async () => {
      const row = await sync.serial(() => {
        if (name === CONTROLPANEL_RULE) throw new ApiError(E.FW_RULE_BUILTIN);
        const stored = rules.get(name);
        if (!stored) throw new ApiError(E.FW_RULE_NOT_FOUND);
        rules.delete(name);
        return stored;
      });
      try {
        await sync.deleteFilterRule(name);
      } catch (err) {
        await sync.serial(() => rules.restore(row));
        throw dataplaneRefusal(err);
      }
    });
  }

  /**
   * The built-in rule as the listing shows it: ACCEPT on INPUT of the panel's API TCP port and every WireGuard
   * listen port (UDP), so `policy_input=DROP` never locks the operator out; `d_port` lists those ports.
   */
  private builtInRule(): FilterRuleWire {
    const ports = this.deps.servers.list().map((s) => s.listen_port).sort((a, b) => a - b);
    if (this.deps.apiPort) ports.unshift(this.deps.apiPort);
    return { name: CONTROLPANEL_RULE, action: 'ACCEPT', chain: 'INPUT', protocol: 'ANY', s_ip: '', d_ip: '', s_port: '', d_port: ports.join(',') };
  }
}

/** A text parameter as a string (`''` when absent). */
function str(value: TextScalar | undefined): string {
  return value === undefined ? '' : String(value);
}

function flag(value: unknown, text: string): boolean {
  const out = toBoolean(value);
  if (out === undefined) throw new ApiError(text);
  return out;
}

function policy(value: TextScalar, text: string): Verdict {
  if (value !== 'ACCEPT' && value !== 'DROP') throw new ApiError(text);
  return value;
}
