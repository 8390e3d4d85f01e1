// The firewall logic shared by the linux implementation and the simulated twin: checks and plans over a backend
// (the read-only views are in firewall-reads.ts).
import { E } from '../../schemas/error-texts.ts';
import {
  CHAIN_PREFIX,
  FWD_CHAIN,
  IN_CHAIN,
  IN_SYS_CHAIN,
  MARK_CHAIN,
  NATOUT_CHAIN,
  OUT_CHAIN,
  POST_CHAIN,
  PRE_CHAIN,
  SERVER_TOP_CHAINS,
  SET_PREFIX,
  markSetName,
  ownerOfChain,
  serverChains,
  type OwnedChain,
} from '../render/firewall-chains.ts';
import { parseIpsetSave, renderSetAdd, renderSetDel, renderSetSync, type SavedSet } from '../render/firewall-ipset.ts';
import type { MangleListEntry, NatListEntry } from '../render/firewall-listing.ts';
import { emptyPlan, renderFirewallRestore, type RestorePlan } from '../render/firewall-restore.ts';
import {
  mergeTopChain,
  renderInput,
  renderOutput,
  renderServerChains,
  renderServerDispatch,
  renderSystemInput,
  renderFilterRule,
  type GlobalRuleInput,
} from '../render/firewall-rules.ts';
import type { CountedSnapshot } from '../render/parse-iptables-save-counters.ts';
import { trafficLogPlan, type TrafficLogChainSpec } from '../render/traffic-log-chain.ts';
import { checkConf, checkFilterRule, checkForwards, checkPeers, checkServer, type NormalPeer, type NormalServer } from './firewall-checks.ts';
import {
  CONTROLPANEL_RULE,
  FirewallError,
  type Family,
  type FilterRule,
  type Firewall,
  type FirewallConf,
  type FirewallInfoView,
  type FirewallPeerChanges,
  type FirewallStats,
  type PortForwardRule,
  type EnsureServerOptions,
  type RulePosition,
  type ServerFirewallSpec,
} from './firewall.ts';
import { FIREWALL_TEXTS as T } from './firewall-texts.ts';
import { FORWARD_KEYS, TABLES, firewallInfo, mangleList, natList, ownedDump, peerSetEntries, serverView, snapshot } from './firewall-reads.ts';

/**
 * What the engine needs of the host: the iptables/ip6tables save+restore pair, ipset, sysctl and versions.
 * `LinuxFirewallBackend` runs the real tools; `MemoryFirewallBackend` is an in-memory kernel with their semantics.
 */
export interface FirewallBackend {
  /** `iptables-save -c` (4) or `ip6tables-save -c` (6): every table with counters. */
  save(family: Family): Promise<string>;
  /** `iptables-restore --noflush` / `ip6tables-restore --noflush` with the payload on stdin. */
  restore(family: Family, payload: string): Promise<void>;
  /** `ipset list -n`: names of every set. */
  ipsetNames(): Promise<string[]>;
  /** `ipset save NAME`: the set's create line and entries. */
  ipsetSave(name: string): Promise<string>;
  /** `ipset restore -exist` with the lines on stdin. */
  ipsetRestore(lines: string[]): Promise<void>;
  /** `sysctl -n KEY`. */
  sysctlGet(key: string): Promise<string>;
  /** `sysctl -w KEY=VALUE`. */
  sysctlSet(key: string, value: string): Promise<void>;
  /** `iptables --version` and `ip -V`, first line each. */
  versions(): Promise<{ iptables: string; iproute2: string }>;
  /**
   * `conntrack -D -p PROTO --orig-port-dst PORT [--orig-dst IP]`: forgets the connections of a removed port forward
   * (an established TCP connection or a UDP flow would otherwise keep its DNAT). No match is not an error.
   */
  conntrackDelete(protocol: 'tcp' | 'udp', dstPort: number, dstIp: string | null): Promise<void>;
}

/** Options of the engine. */
export interface FirewallOptions {
  /** The panel's API TCP port, kept reachable by `system_CONTROLPANEL`; null: none (tests). */
  apiPort: number | null;
  /** Families the host has (default both); a server's IPv6 subnet is ignored without 6. */
  families?: Family[];
}

const FAMILIES: Family[] = [4, 6];
const addressesOf = (peer: NormalPeer): string[] => (peer.addressIpv6 ? [peer.address, peer.addressIpv6] : [peer.address]);
/** The live mark sets of one server by family (null: absent). */
type SetState = Map<Family, SavedSet | null>;

/** {@link Firewall} over a {@link FirewallBackend}; see the interface for the chain layout and guarantees. */
export class FirewallEngine implements Firewall {
  private readonly servers = new Map<string, NormalServer>();
  private conf: FirewallConf | null = null;
  private rules: FilterRule[] = [];
  private readonly counters: FirewallStats = { restores: 0, ipsetRestores: 0, sysctlWrites: 0, conntrackDeletes: 0 };
  private readonly families: Family[];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(protected readonly backend: FirewallBackend, private readonly opts: FirewallOptions) {
    this.families = opts.families ?? FAMILIES;
  }

  ensureServer(spec: ServerFirewallSpec, opts: EnsureServerOptions = {}): Promise<void> {
    return this.serial(async () => {
      const internal = this.conf?.internal_traffic ?? true;
      const held = opts.rulesOnly ? this.servers.get(spec.name) : undefined;
      let server = checkServer(held ? { ...spec, peers: [] } : spec, internal);
      // A family gained or lost needs its set created or destroyed: that is a full reconcile.
      const known = held && FAMILIES.every((f) => (held.input.networks[f].length > 0) === (server.input.networks[f].length > 0)) ? held : undefined;
      if (held && !known) server = checkServer(spec, internal);
      if (known) {
        server.peers = known.peers;
        server.addresses = known.addresses;
      }
      this.checkMarksElsewhere(server.input.name, server.peers);
      server.input.forwards = checkForwards(spec.forwards, this.forwardContext(server.input.name, server));
      await this.syncServer(server, known ? null : await this.ipsetState(server.input.name));
      const before = this.servers.get(server.input.name);
      this.servers.set(server.input.name, server);
      if (before) await this.forgetConnections(before, server.input.forwards, server.input.externalIp);
    });
  }

  /**
   * O(batch), never O(peers): the checks use the server's address index, the set lines go out in one `ipset
   * restore`, and only then is the in-memory state changed (a failed write leaves it as it was).
   */
  applyPeers(name: string, changes: FirewallPeerChanges): Promise<void> {
    return this.serial(async () => {
      const server = this.server(name);
      const upserts = checkPeers(changes.upsert);
      this.checkMarksElsewhere(name, upserts);
      const removing = new Set(changes.remove);
      for (const peer of upserts.values()) {
        for (const address of addressesOf(peer)) {
          const holder = server.addresses.get(address);
          if (holder === undefined || holder === peer.mark || removing.has(holder)) continue;
          const moving = upserts.get(holder);
          if (moving && !addressesOf(moving).includes(address)) continue;
          throw new FirewallError(E.IP_IN_USE);
        }
      }
      const lines: string[] = [];
      const drop = (peer: NormalPeer) => {
        if (this.hasFamily(server, 4)) lines.push(renderSetDel(markSetName(name, 4), peer.address));
        if (peer.addressIpv6 && this.hasFamily(server, 6)) lines.push(renderSetDel(markSetName(name, 6), peer.addressIpv6));
      };
      for (const mark of removing) {
        const old = server.peers.get(mark);
        if (old && !upserts.has(mark)) drop(old);
      }
      for (const peer of upserts.values()) {
        const old = server.peers.get(peer.mark);
        if (old && (old.address !== peer.address || old.addressIpv6 !== peer.addressIpv6)) drop(old);
      }
      for (const peer of upserts.values()) {
        if (this.hasFamily(server, 4)) lines.push(renderSetAdd(markSetName(name, 4), peer.address, peer.mark));
        if (peer.addressIpv6 && this.hasFamily(server, 6)) lines.push(renderSetAdd(markSetName(name, 6), peer.addressIpv6, peer.mark));
      }
      if (lines.length > 0) await this.ipsetRestore(lines);
      const unindex = (peer: NormalPeer) => {
        for (const a of addressesOf(peer)) if (server.addresses.get(a) === peer.mark) server.addresses.delete(a);
      };
      for (const mark of [...removing, ...upserts.keys()]) {
        const old = server.peers.get(mark);
        if (old) unindex(old);
        server.peers.delete(mark);
      }
      for (const peer of upserts.values()) {
        server.peers.set(peer.mark, peer);
        for (const a of addressesOf(peer)) server.addresses.set(a, peer.mark);
      }
      const forwards = server.input.forwards.filter((f) => server.addresses.has(f.to_ip));
      if (forwards.length !== server.input.forwards.length) {
        const next: NormalServer = { ...server, input: { ...server.input, forwards } };
        await this.syncServer(next, null);
        this.servers.set(name, next);
        await this.forgetConnections(server, forwards);
      }
    });
  }

  setForwards(name: string, forwards: PortForwardRule[]): Promise<void> {
    return this.serial(async () => {
      const server = this.server(name);
      const checked = checkForwards(forwards, this.forwardContext(name, server));
      const next: NormalServer = { ...server, input: { ...server.input, forwards: checked } };
      await this.syncServer(next, null);
      this.servers.set(name, next);
      await this.forgetConnections(server, checked);
    });
  }

  removeServer(name: string): Promise<void> {
    return this.serial(async () => {
      const others = [...this.servers.values()].filter((s) => s.input.name !== name);
      for (const family of this.families) {
        const live = await this.snapshot(family);
        const plan = emptyPlan();
        plan.remove.push(...serverChains(name));
        for (const top of SERVER_TOP_CHAINS) this.mergeInto(plan, live, top, name, []);
        this.globalChains(plan, live, family, others, false);
        await this.write(family, live, plan);
      }
      const sets = new Set(await this.backend.ipsetNames());
      const destroy = FAMILIES.map((f) => markSetName(name, f)).filter((s) => sets.has(s));
      if (destroy.length > 0) await this.ipsetRestore(destroy.map((s) => `destroy ${s}`));
      const held = this.servers.get(name);
      this.servers.delete(name);
      if (held) await this.forgetConnections(held, []);
    });
  }

  async listServers(): Promise<string[]> {
    const names = new Set<string>();
    for (const family of this.families) {
      for (const chains of (await this.snapshot(family)).values()) {
        for (const chain of chains.keys()) {
          const owner = ownerOfChain(chain);
          if (owner) names.add(owner);
        }
      }
    }
    for (const set of await this.backend.ipsetNames()) {
      const match = /^vpnhost-(wg\d+)-[46]$/.exec(set);
      if (match) names.add(match[1]);
    }
    return [...names].sort();
  }

  ensureGlobal(conf: FirewallConf, rules: FilterRule[]): Promise<void> {
    return this.serial(async () => {
      const checked = checkConf(conf);
      const list = rules.map((r) => checkFilterRule(r));
      const names = new Set<string>();
      for (const rule of list) {
        if (names.has(rule.name)) throw new FirewallError(E.FW_RULE_EXISTS);
        names.add(rule.name);
      }
      const internalChanged = (this.conf?.internal_traffic ?? true) !== checked.internal_traffic;
      this.conf = checked;
      this.rules = list;
      for (const server of this.servers.values()) server.input.globalInternalTraffic = checked.internal_traffic;
      for (const key of FORWARD_KEYS.slice(0, this.families.includes(6) ? 2 : 1)) {
        const value = checked.ip_forward ? '1' : '0';
        if ((await this.backend.sysctlGet(key)) !== value) {
          await this.backend.sysctlSet(key, value);
          this.counters.sysctlWrites++;
        }
      }
      for (const family of this.families) {
        const live = await this.snapshot(family);
        const plan = emptyPlan();
        this.globalChains(plan, live, family, [...this.servers.values()], true);
        if (internalChanged) {
          for (const server of this.servers.values()) {
            plan.chains.push(...renderServerChains(server.input, family).filter((c) => c.table === 'filter'));
          }
        }
        for (const chain of ['INPUT', 'FORWARD', 'OUTPUT']) {
          const key = `policy_${chain.toLowerCase()}` as 'policy_input' | 'policy_forward' | 'policy_output';
          plan.policies.push({ table: 'filter', chain, policy: checked[key] });
        }
        await this.write(family, live, plan);
      }
    });
  }

  addFilterRule(rule: FilterRule, position: RulePosition): Promise<void> {
    return this.serial(async () => {
      const checked = checkFilterRule(rule);
      if (this.rules.some((r) => r.name === checked.name)) throw new FirewallError(E.FW_RULE_EXISTS);
      const before = this.rules;
      const after = position === 'top' ? [checked, ...before] : [...before, checked];
      await this.writeRules(before, after, (family) => {
        const line = renderFilterRule(checked, family);
        if (line === null) return [];
        return [position === 'top' ? `-I ${IN_CHAIN.chain} 2${line.slice(2 + IN_CHAIN.chain.length + 1)}` : line];
      });
      this.rules = after;
    });
  }

  deleteFilterRule(name: string): Promise<void> {
    return this.serial(async () => {
      if (name === CONTROLPANEL_RULE) throw new FirewallError(E.FW_RULE_BUILTIN);
      const rule = this.rules.find((r) => r.name === name);
      if (!rule) throw new FirewallError(E.FW_RULE_NOT_FOUND);
      const after = this.rules.filter((r) => r !== rule);
      await this.writeRules(this.rules, after, (family) => {
        const line = renderFilterRule(rule, family);
        return line === null ? [] : [`-D${line.slice(2)}`];
      });
      this.rules = after;
    });
  }

  resetAll(): Promise<void> {
    return this.serial(async () => {
      for (const family of this.families) {
        const live = await this.snapshot(family);
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
        for (const chain of ['INPUT', 'FORWARD', 'OUTPUT']) plan.policies.push({ table: 'filter', chain, policy: 'ACCEPT' });
        await this.write(family, live, plan);
      }
      const sets = (await this.backend.ipsetNames()).filter((s) => s.startsWith(SET_PREFIX));
      if (sets.length > 0) await this.ipsetRestore(sets.map((s) => `destroy ${s}`));
      this.servers.clear();
      this.conf = null;
      this.rules = [];
    });
  }

  setTrafficLog(spec: TrafficLogChainSpec | null): Promise<void> {
    return this.serial(async () => {
      for (const family of this.families) {
        const live = await this.snapshot(family);
        await this.write(family, live, trafficLogPlan(live, spec));
      }
    });
  }

  natRules(name: string): Promise<string> {
    return this.serial(async () => {
      this.server(name);
      return serverView(this.backend, this.families, name, 'nat', [PRE_CHAIN, NATOUT_CHAIN, POST_CHAIN]);
    });
  }

  filterRules(name: string): Promise<string> {
    return this.serial(async () => {
      this.server(name);
      return serverView(this.backend, this.families, name, 'filter', [FWD_CHAIN]);
    });
  }

  mangleRules(name: string, mark: number): Promise<string> {
    return this.serial(async () => {
      const server = this.server(name);
      const text = await serverView(this.backend, this.families, name, 'mangle', [MARK_CHAIN]);
      const peer = server.peers.get(mark);
      const addresses = this.families
        .filter((family) => this.hasFamily(server, family))
        .map((family): [Family, string | undefined] => [family, (family === 4 ? peer?.address : peer?.addressIpv6) ?? undefined]);
      return [text, ...(await peerSetEntries(this.backend, name, addresses))].filter((line) => line !== '').join('\n');
    });
  }

  natList(): Promise<NatListEntry[]> {
    return this.serial(() => natList(this.backend, this.families));
  }

  mangleList(): Promise<MangleListEntry[]> {
    return this.serial(() => mangleList(this.backend));
  }

  info(): Promise<FirewallInfoView> {
    return firewallInfo(this.backend);
  }

  dump(): Promise<string> {
    return this.serial(() => ownedDump(this.backend, this.families));
  }

  stats(): FirewallStats {
    return { ...this.counters };
  }

  // --- internals -------------------------------------------------------------------------------------------------

  private server(name: string): NormalServer {
    const server = this.servers.get(name);
    if (!server) throw new FirewallError(E.WIREGUARD_SERVER_NOT_FOUND);
    return server;
  }

  private hasFamily(server: NormalServer, family: Family): boolean {
    return this.families.includes(family) && server.input.networks[family].length > 0;
  }

  /** A mark is unique on the host: refuses marks another server's peers hold. */
  private checkMarksElsewhere(name: string, peers: Map<number, NormalPeer>): void {
    for (const other of this.servers.values()) {
      if (other.input.name === name) continue;
      for (const mark of peers.keys()) if (other.peers.has(mark)) throw new FirewallError(T.MARK_IN_USE);
    }
  }

  private forwardContext(name: string, server: NormalServer) {
    const others = [...this.servers.values()].filter((s) => s.input.name !== name);
    return {
      addresses: server.addresses,
      listenPorts: [server.listenPort, ...others.map((s) => s.listenPort)].filter((p) => p > 0),
      otherKeys: new Set(others.flatMap((s) => s.input.forwards.map((f) => `${f.dst_port}_${f.protocol}`))),
      apiPort: this.opts.apiPort,
    };
  }

  /** Live sets of one server (null entries when absent), read before a full reconcile. */
  private async ipsetState(name: string): Promise<SetState> {
    const names = new Set(await this.backend.ipsetNames());
    const state: SetState = new Map();
    for (const family of FAMILIES) {
      const set = markSetName(name, family);
      state.set(family, names.has(set) ? (parseIpsetSave(await this.backend.ipsetSave(set)).get(set) ?? null) : null);
    }
    return state;
  }

  /**
   * Brings one server to `server`: its sets first (a rule may only name an existing set) when `sets` is given (full
   * reconcile), then per family its sub-chains, its lines in the top chains and the system chain (listen port).
   * A family the server no longer has loses its chains and then its set.
   */
  private async syncServer(server: NormalServer, sets: SetState | null): Promise<void> {
    const name = server.input.name;
    if (sets) {
      const lines: string[] = [];
      for (const family of FAMILIES) {
        if (!this.hasFamily(server, family)) continue;
        const wanted = new Map<string, number>();
        for (const peer of server.peers.values()) {
          const address = family === 4 ? peer.address : peer.addressIpv6;
          if (address) wanted.set(address, peer.mark);
        }
        lines.push(...renderSetSync(sets.get(family) ?? null, markSetName(name, family), family, wanted));
      }
      if (lines.length > 0) await this.ipsetRestore(lines);
    }
    const servers = [...[...this.servers.values()].filter((s) => s.input.name !== name), server];
    for (const family of this.families) {
      const live = await this.snapshot(family);
      const plan = emptyPlan();
      const has = this.hasFamily(server, family);
      if (has) plan.chains.push(...renderServerChains(server.input, family));
      else plan.remove.push(...serverChains(name));
      const dispatch = has ? renderServerDispatch(server.input, family) : [];
      for (const top of SERVER_TOP_CHAINS) {
        if (family === 6 && (top === PRE_CHAIN || top === NATOUT_CHAIN)) continue;
        this.mergeInto(plan, live, top, name, dispatch.find((d) => d.top === top)?.lines ?? []);
      }
      this.globalChains(plan, live, family, servers, false);
      await this.write(family, live, plan);
    }
    if (sets) {
      const stale = FAMILIES.filter((f) => !this.hasFamily(server, f) && sets.get(f));
      if (stale.length > 0) await this.ipsetRestore(stale.map((f) => `destroy ${markSetName(name, f)}`));
    }
  }

  /** Puts a top chain with one server's lines replaced into the plan, and its hook jump. */
  private mergeInto(plan: RestorePlan, live: CountedSnapshot, top: OwnedChain, name: string, lines: string[]): void {
    const current = live.get(top.table)?.get(top.chain)?.rules.map((r) => r.rule) ?? [];
    const merged = mergeTopChain(current, name, lines);
    if (merged.length === 0 && !live.get(top.table)?.has(top.chain)) return;
    plan.chains.push({ table: top.table, chain: top.chain, rules: merged });
    plan.hooks.push(top);
  }

  /**
   * The global chains: `VPNHOST-IN-SYS` (system_CONTROLPANEL with every listen port), `VPNHOST-OUT`, and
   * `VPNHOST-IN` — rewritten only with `withRules` (ensureGlobal) or when missing, so a server change before the
   * boot-time ensureGlobal never drops live operator rules. Policies not yet known are read from the live chains.
   */
  private globalChains(plan: RestorePlan, live: CountedSnapshot, family: Family, servers: NormalServer[], withRules: boolean): void {
    const policy = (chain: string): 'ACCEPT' | 'DROP' => (live.get('filter')?.get(chain)?.policy === 'DROP' ? 'DROP' : 'ACCEPT');
    const g: GlobalRuleInput = {
      apiPort: this.opts.apiPort,
      listenPorts: servers.map((s) => s.listenPort),
      policyInput: this.conf?.policy_input ?? policy('INPUT'),
      policyOutput: this.conf?.policy_output ?? policy('OUTPUT'),
      rules: this.rules,
    };
    plan.chains.push({ table: 'filter', chain: IN_SYS_CHAIN, rules: renderSystemInput(g) });
    if (withRules || !live.get('filter')?.has(IN_CHAIN.chain)) {
      plan.chains.push({ table: 'filter', chain: IN_CHAIN.chain, rules: renderInput(g, family) });
    }
    plan.chains.push({ table: 'filter', chain: OUT_CHAIN.chain, rules: renderOutput(g) });
    plan.hooks.push(IN_CHAIN, OUT_CHAIN);
  }

  /**
   * Writes an operator-rule change: incrementally (`-I VPNHOST-IN 2` / `-A` / `-D`, other rules keep their
   * counters) when the live chain is exactly what `before` renders, else a refill of `VPNHOST-IN` with `after`.
   */
  private async writeRules(before: FilterRule[], after: FilterRule[], step: (family: Family) => string[]): Promise<void> {
    for (const family of this.families) {
      const live = await this.snapshot(family);
      const g = (rules: FilterRule[]): GlobalRuleInput => ({ apiPort: null, listenPorts: [], policyInput: 'ACCEPT', policyOutput: 'ACCEPT', rules });
      const current = live.get('filter')?.get(IN_CHAIN.chain)?.rules.map((r) => r.rule);
      const expected = renderInput(g(before), family);
      if (current && current.length === expected.length && current.every((r, i) => r === expected[i])) {
        const lines = step(family);
        if (lines.length === 0) continue;
        await this.restore(family, `*filter\n${lines.join('\n')}\nCOMMIT\n`);
        continue;
      }
      const plan = emptyPlan();
      this.rules = after;
      this.globalChains(plan, live, family, [...this.servers.values()], true);
      this.rules = before;
      await this.write(family, live, plan);
    }
  }

  /** Drops the conntrack entries of every forward of `before` that `after` no longer has (same target). */
  private async forgetConnections(before: NormalServer, after: PortForwardRule[], externalIp = before.input.externalIp): Promise<void> {
    const keep = new Set(after.map((f) => `${f.dst_port}/${f.protocol}/${f.to_ip}/${f.to_port}/${externalIp}`));
    for (const f of before.input.forwards) {
      if (keep.has(`${f.dst_port}/${f.protocol}/${f.to_ip}/${f.to_port}/${before.input.externalIp}`)) continue;
      this.counters.conntrackDeletes++;
      await this.backend.conntrackDelete(f.protocol, f.dst_port, before.input.externalIp);
    }
  }

  private snapshot(family: Family): Promise<CountedSnapshot> {
    return snapshot(this.backend, family);
  }

  private async write(family: Family, live: CountedSnapshot, plan: RestorePlan): Promise<void> {
    const payload = renderFirewallRestore(live, plan);
    if (payload !== null) await this.restore(family, payload);
  }

  private async restore(family: Family, payload: string): Promise<void> {
    this.counters.restores++;
    await this.backend.restore(family, payload);
  }

  private async ipsetRestore(lines: string[]): Promise<void> {
    this.counters.ipsetRestores++;
    await this.backend.ipsetRestore(lines);
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
