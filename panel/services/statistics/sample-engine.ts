// The sample engine: deltas of one sample's counters against the baselines it keeps in memory, and the one write.
import type { PeerTransfers } from '../../dataplane/wireguard/driver.ts';
import type { IpsecSa } from '../../dataplane/ipsec/ipsec.ts';
import { IKEV2_SOURCE, wireguardSource, type SampleWrite, type TrafficStatisticsRepository } from '../../store/repositories/traffic-statistics.ts';
import { baselineSet, type BaselineSet } from './baseline-set.ts';
import { splitOverDays, type SampleDay } from './deltas.ts';
import { dayStart, formatDay, wallClock } from './zoned-days.ts';

/** An IKE SA as the engine needs it. */
export type SaCounters = Pick<IpsecSa, 'uniqueId' | 'username' | 'establishedSeconds' | 'bytesIn' | 'bytesOut'>;

/** What the sampler read: per server its interface's counters (null: the interface does not exist), and the SAs. */
export interface SampleInput {
  /** Unix ms of the sample. */
  at: number;
  dumps: Array<[serverId: number, iface: string, counters: PeerTransfers | null]>;
  /** The live IKE SAs; null when they were not read (their baselines are kept). */
  sas: SaCounters[] | null;
}

/** What a sample added. */
export interface SampleOutcome {
  peers: number;
  /**
   * The parked peers the sample read (no allowed IPs: see PeerTransfers.parked), counted like the others: per interface
   * their keys and endpoints. Once this sample is stored they may be removed (TrafficStatisticsService.sampleAndSettle).
   */
  parked: Array<[iface: string, publicKey: string, endpoint: string | null]>;
  ikeSas: number;
  resets: number;
  download: number;
  upload: number;
  /** Time of the engine's part in ms (deltas, baselines, the write). */
  engineMs: number;
}

/** Tolerance of the IKE SA age check (charon reports whole seconds; clocks of two reads differ a little). */
const SA_AGE_SLACK_MS = 2000;

/**
 * Holds the baselines of every source in memory (loaded once from `traffic_baseline_sets`) and an index of the
 * accounts' public keys (rebuilt after {@link accountsChanged}); turns one sample's counters into day additions and
 * new baselines and writes both in one IMMEDIATE transaction; memory follows only after the commit, so a failed or
 * killed write leaves store and memory at the previous sample. Synchronous: it runs in the sampler's worker thread
 * (or in the panel's thread for an in-memory store).
 */
export class SampleEngine {
  private sets: Map<string, BaselineSet> | null = null;
  private keys: Map<string, readonly [id: number, serverId: number]> | null = null;

  constructor(private readonly repo: TrafficStatisticsRepository, private readonly timeZone: string) {}

  /** Accounts were written: the key index is rebuilt at the next sample. */
  accountsChanged(): void {
    this.keys = null;
  }

  /** One sample (see TrafficSampler for the rules). */
  sample(input: SampleInput): SampleOutcome {
    const started = performance.now();
    const sets = this.baselines();
    const keys = this.keyIndex();
    const w = wallClock(input.at, this.timeZone);
    const today: SampleDay = { key: formatDay(w.year, w.month, w.day), start: dayStart(w.year, w.month, w.day, this.timeZone) };
    const pass = new SamplePass(input.at, today, this.timeZone);
    const parked: SampleOutcome['parked'] = [];
    for (const [serverId, iface, counters] of input.dumps) {
      const source = wireguardSource(iface);
      pass.sets.set(source, counters && pass.wireguard(serverId, counters, sets.get(source), (key) => keys.get(key)));
      for (const [key, endpoint] of counters?.parked ?? []) parked.push([iface, key, endpoint]);
    }
    if (input.sas) pass.sets.set(IKEV2_SOURCE, pass.ikev2(input.sas, sets.get(IKEV2_SOURCE), (u) => this.repo.accountIdOfUsername(u)));
    this.store(pass.write());
    for (const [source, set] of pass.sets) {
      if (set) sets.set(source, set);
      else sets.delete(source);
    }
    return { ...pass.result, parked, engineMs: performance.now() - started };
  }

  /**
   * Marks these accounts' WireGuard baselines invalid (their peers left: they come back at zero); persisted at once,
   * one write for all.
   */
  peerLeft(accountIds: readonly number[]): void {
    if (accountIds.length === 0) return;
    const leaving = new Set(accountIds);
    const sets = this.baselines();
    const changed = new Map<string, BaselineSet | null>();
    for (const [source, set] of sets) {
      if (source === IKEV2_SOURCE) continue;
      let ids: Float64Array | null = null;
      for (let slot = 0; slot < set.ids.length; slot++) {
        if (!leaving.has(set.ids[slot])) continue;
        ids ??= set.ids.slice();
        ids[slot] = -1;
      }
      if (ids) changed.set(source, { ...set, ids });
    }
    if (changed.size === 0) return;
    this.store({ accountIds: [], days: [], download: [], upload: [], sets: changed });
    for (const [source, set] of changed) sets.set(source, set!);
  }

  /**
   * Writes over the baselines this engine holds: the store refuses when another engine wrote them since (a worker
   * given up for dead that still committed, or the sampler's fallback after it); then the memory is dropped and the
   * next call reloads it from the store.
   */
  private store(write: SampleWrite): void {
    const held = this.baselines();
    const expected = new Map<string, number | null>();
    for (const source of write.sets.keys()) expected.set(source, held.get(source)?.sampledAt ?? null);
    try {
      this.repo.write(write, expected);
    } catch (err) {
      this.sets = null;
      throw err;
    }
  }

  private baselines(): Map<string, BaselineSet> {
    this.sets ??= this.repo.loadSets();
    return this.sets;
  }

  private keyIndex(): Map<string, readonly [number, number]> {
    if (!this.keys) {
      this.keys = new Map();
      for (const [key, id, serverId] of this.repo.accountKeys()) this.keys.set(key, [id, serverId]);
    }
    return this.keys;
  }
}

/** The deltas of one sample against the previous baselines: the day additions and the new sets (not yet stored). */
class SamplePass {
  readonly sets = new Map<string, BaselineSet | null>();
  readonly result = { peers: 0, ikeSas: 0, resets: 0, download: 0, upload: 0 };
  private readonly accountIds: number[] = [];
  private readonly days: string[] = [];
  private readonly download: number[] = [];
  private readonly upload: number[] = [];

  constructor(private readonly at: number, private readonly today: SampleDay, private readonly timeZone: string) {}

  /** One interface's dump: the peers that are accounts of `serverId`, columns copied, no object per peer. */
  wireguard(serverId: number, counters: PeerTransfers, prev: BaselineSet | undefined, accountOf: (key: string) => readonly [number, number, ...unknown[]] | undefined): BaselineSet {
    const n = counters.keys.length;
    const keys: string[] = [];
    const ids = new Float64Array(n);
    const rx = new Float64Array(n);
    const tx = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const key = counters.keys[i];
      const account = accountOf(key);
      if (account === undefined || account[1] !== serverId) continue;
      const m = keys.length;
      keys.push(key);
      ids[m] = account[0];
      rx[m] = counters.rx[i];
      tx[m] = counters.tx[i];
      this.count(prev, key, account[0], rx[m], tx[m], true);
    }
    this.result.peers += keys.length;
    return baselineSet(this.at, keys, ids.subarray(0, keys.length), rx.subarray(0, keys.length), tx.subarray(0, keys.length));
  }

  /** The live IKE SAs of accounts (download = bytes out of the server, upload = bytes in), keyed by unique id. */
  ikev2(sas: SaCounters[], prev: BaselineSet | undefined, accountOf: (username: string) => number | undefined): BaselineSet {
    const keys: string[] = [];
    const ids: number[] = [];
    const rx: number[] = [];
    const tx: number[] = [];
    for (const sa of sas) {
      const id = accountOf(sa.username);
      if (id === undefined) continue;
      keys.push(sa.uniqueId);
      ids.push(id);
      rx.push(sa.bytesIn);
      tx.push(sa.bytesOut);
      // the same SA as at the baseline only when it was already established then
      const continues = prev !== undefined && sa.establishedSeconds * 1000 + SA_AGE_SLACK_MS >= this.at - prev.sampledAt;
      this.count(prev, sa.uniqueId, id, sa.bytesIn, sa.bytesOut, continues);
    }
    this.result.ikeSas += keys.length;
    return baselineSet(this.at, keys, Float64Array.from(ids), Float64Array.from(rx), Float64Array.from(tx));
  }

  /** The writes of the pass. */
  write(): SampleWrite {
    return { accountIds: this.accountIds, days: this.days, download: this.download, upload: this.upload, sets: this.sets };
  }

  private count(prev: BaselineSet | undefined, key: string, id: number, rx: number, tx: number, sameOrigin: boolean): void {
    const slot = prev?.slot.get(key);
    const known = sameOrigin && slot !== undefined && prev!.ids[slot] === id;
    const valid = known && rx >= prev!.rx[slot!] && tx >= prev!.tx[slot!];
    if (known && !valid) this.result.resets++;
    const upload = valid ? rx - prev!.rx[slot!] : rx;
    const download = valid ? tx - prev!.tx[slot!] : tx;
    if (upload === 0 && download === 0) return;
    this.result.download += download;
    this.result.upload += upload;
    const from = valid && prev!.sampledAt < this.at ? prev!.sampledAt : this.at;
    if (from >= this.today.start) {
      this.add(id, this.today.key, download, upload);
      return;
    }
    for (const d of splitOverDays(from, this.at, download, upload, this.timeZone)) this.add(id, d.day, d.download, d.upload);
  }

  private add(id: number, day: string, download: number, upload: number): void {
    this.accountIds.push(id);
    this.days.push(day);
    this.download.push(download);
    this.upload.push(upload);
  }
}
