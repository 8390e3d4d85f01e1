// The firewall's coordinator, shared by the linux implementation and the simulated twin: it holds the servers,
// serialises every call and runs checks, plans and writes over a backend. The parts live beside it: the backend and
// its counted writes (firewall-backend.ts), global settings and operator rules (firewall-global.ts), the peer mark
// sets (firewall-peer-sets.ts), the server and reset plans (firewall-plans.ts) and the read-only views (firewall-reads.ts).
import { E } from '../../../shared/wire/error-texts.ts';
import { FWD_CHAIN, MARK_CHAIN, NATOUT_CHAIN, POST_CHAIN, PRE_CHAIN, SET_PREFIX } from '../render/firewall-chains.ts';
import type { MangleListEntry, NatListEntry } from '../render/firewall-listing.ts';
import { emptyPlan } from '../render/firewall-restore.ts';
import { trafficLogPlan, type TrafficLogChainSpec } from '../render/traffic-log-chain.ts';
import { FirewallWriter, type FirewallBackend } from './firewall-backend.ts';
import { checkForwards, checkPeers, checkServer, type ForwardContext, type NormalPeer, type NormalServer } from './firewall-checks.ts';
import { GlobalFilter } from './firewall-global.ts';
import {
  FAMILIES,
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
import {
  batchSetLines,
  checkAddressesFree,
  destroySetLines,
  indexBatch,
  readSetState,
  setSyncLines,
  staleSetLines,
  type SetState,
} from './firewall-peer-sets.ts';
import { planReset, planServerChains, planServerRemoval } from './firewall-plans.ts';
import { FIREWALL_TEXTS as T } from './firewall-texts.ts';
import { firewallInfo, mangleList, natList, ownedDump, ownedServers, peerSetEntries, serverView } from './firewall-reads.ts';

/** Options of the engine. */
export interface FirewallOptions {
  /** The panel's API TCP port, kept reachable by `system_CONTROLPANEL`; null: none (tests). */
  apiPort: number | null;
  /** Families the host has (default both); a server's IPv6 subnet is ignored without 6. */
  families?: Family[];
}

/** {@link Firewall} over a {@link FirewallBackend}; see the interface for the chain layout and guarantees. */
export class FirewallEngine implements Firewall {
  private readonly servers = new Map<string, NormalServer>();
  private readonly families: Family[];
  private readonly writer: FirewallWriter;
  private readonly global: GlobalFilter;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(protected readonly backend: FirewallBackend, private readonly opts: FirewallOptions) {
    this.families = opts.families ?? FAMILIES;
    this.writer = new FirewallWriter(backend);
    this.global = new GlobalFilter(this.writer, this.families, opts.apiPort);
  }

  ensureServer(spec: ServerFirewallSpec, opts: EnsureServerOptions = {}): Promise<void> {
    return this.serial(async () => {
      const internal = this.global.internalTraffic;
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
      await this.syncServer(server, known ? null : await readSetState(this.backend, server.input.name));
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
      checkAddressesFree(server, upserts, removing);
      const lines = batchSetLines(server, upserts, removing, this.setFamilies(server));
      if (lines.length > 0) await this.writer.ipsetRestore(lines);
      indexBatch(server, upserts, removing);
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
      const others = this.othersThan(name);
      for (const family of this.families) {
        const live = await this.writer.snapshot(family);
        const plan = emptyPlan();
        planServerRemoval(plan, live, name);
        this.global.planChains(plan, live, family, others, false);
        await this.writer.write(family, live, plan);
      }
      const destroy = await destroySetLines(this.backend, name);
      if (destroy.length > 0) await this.writer.ipsetRestore(destroy);
      const held = this.servers.get(name);
      this.servers.delete(name);
      if (held) await this.forgetConnections(held, []);
    });
  }

  listServers(): Promise<string[]> {
    return ownedServers(this.backend, this.families);
  }

  ensureGlobal(conf: FirewallConf, rules: FilterRule[]): Promise<void> {
    return this.serial(() => this.global.ensure(conf, rules, [...this.servers.values()]));
  }

  addFilterRule(rule: FilterRule, position: RulePosition): Promise<void> {
    return this.serial(() => this.global.addRule(rule, position, [...this.servers.values()]));
  }

  deleteFilterRule(name: string): Promise<void> {
    return this.serial(() => this.global.deleteRule(name, [...this.servers.values()]));
  }

  resetAll(): Promise<void> {
    return this.serial(async () => {
      for (const family of this.families) {
        const live = await this.writer.snapshot(family);
        await this.writer.write(family, live, planReset(live));
      }
      const sets = (await this.backend.ipsetNames()).filter((s) => s.startsWith(SET_PREFIX));
      if (sets.length > 0) await this.writer.ipsetRestore(sets.map((s) => `destroy ${s}`));
      this.servers.clear();
      this.global.clear();
    });
  }

  setTrafficLog(spec: TrafficLogChainSpec | null): Promise<void> {
    return this.serial(async () => {
      for (const family of this.families) {
        const live = await this.writer.snapshot(family);
        await this.writer.write(family, live, trafficLogPlan(live, spec));
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
    return this.writer.stats();
  }

  // --- internals -------------------------------------------------------------------------------------------------

  private server(name: string): NormalServer {
    const server = this.servers.get(name);
    if (!server) throw new FirewallError(E.WIREGUARD_SERVER_NOT_FOUND);
    return server;
  }

  /** Every held server but `name`. */
  private othersThan(name: string): NormalServer[] {
    return [...this.servers.values()].filter((s) => s.input.name !== name);
  }

  private hasFamily(server: NormalServer, family: Family): boolean {
    return this.families.includes(family) && server.input.networks[family].length > 0;
  }

  /** The families the server has rules and a mark set of on this host, IPv4 first. */
  private setFamilies(server: NormalServer): Family[] {
    return FAMILIES.filter((family) => this.hasFamily(server, family));
  }

  /** A mark is unique on the host: refuses marks another server's peers hold. */
  private checkMarksElsewhere(name: string, peers: Map<number, NormalPeer>): void {
    for (const other of this.othersThan(name)) {
      for (const mark of peers.keys()) if (other.peers.has(mark)) throw new FirewallError(T.MARK_IN_USE);
    }
  }

  private forwardContext(name: string, server: NormalServer): ForwardContext {
    const others = this.othersThan(name);
    return {
      addresses: server.addresses,
      listenPorts: [server.listenPort, ...others.map((s) => s.listenPort)].filter((p) => p > 0),
      otherKeys: new Set(others.flatMap((s) => s.input.forwards.map((f) => `${f.dst_port}_${f.protocol}`))),
      apiPort: this.opts.apiPort,
    };
  }

  /**
   * Brings one server to `server`: its sets first (a rule may only name an existing set) when `sets` is given (full
   * reconcile), then per family its sub-chains, its lines in the top chains and the global chains (listen ports).
   * A family the server no longer has loses its chains and then its set.
   */
  private async syncServer(server: NormalServer, sets: SetState | null): Promise<void> {
    const name = server.input.name;
    const families = this.setFamilies(server);
    if (sets) {
      const lines = setSyncLines(server, sets, families);
      if (lines.length > 0) await this.writer.ipsetRestore(lines);
    }
    const servers = [...this.othersThan(name), server];
    for (const family of this.families) {
      const live = await this.writer.snapshot(family);
      const plan = emptyPlan();
      planServerChains(plan, live, server.input, family, this.hasFamily(server, family));
      this.global.planChains(plan, live, family, servers, false);
      await this.writer.write(family, live, plan);
    }
    if (sets) {
      const stale = staleSetLines(name, sets, families);
      if (stale.length > 0) await this.writer.ipsetRestore(stale);
    }
  }

  /** Drops the conntrack entries of every forward of `before` that `after` no longer has (same target). */
  private async forgetConnections(before: NormalServer, after: PortForwardRule[], externalIp = before.input.externalIp): Promise<void> {
    const keep = new Set(after.map((f) => `${f.dst_port}/${f.protocol}/${f.to_ip}/${f.to_port}/${externalIp}`));
    for (const f of before.input.forwards) {
      if (keep.has(`${f.dst_port}/${f.protocol}/${f.to_ip}/${f.to_port}/${before.input.externalIp}`)) continue;
      await this.writer.conntrackDelete(f.protocol, f.dst_port, before.input.externalIp);
    }
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
