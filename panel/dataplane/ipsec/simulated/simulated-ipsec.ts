// In-memory twin of the IPsec seam: the same invariants as charon (users, SAs, terminate), clients driven by tests.
import { systemClock, type Clock } from '../../../../shared/clock.ts';
import { connName, IPSEC_DEVICE, IpsecError, type Ipsec, type IpsecDesired, type IpsecSa, type IpsecStatus, type IpsecUser } from '../ipsec.ts';

/**
 * The simulated IKEv2 responder. `connect()` stands in for a client: it succeeds only while the daemon runs, the
 * user is loaded and the password matches (what EAP-MSCHAPv2 checks), and returns the SA with the user's address.
 * `crash()` ends the "process" as a kill -9 would.
 */
export class SimulatedIpsec implements Ipsec {
  private running = false;
  private wanted = false;
  private pid: number | null = null;
  private nextPid = 4000;
  private nextSa = 1;
  private desired: IpsecDesired | null = null;
  readonly users = new Map<string, IpsecUser>();
  private readonly sas = new Map<string, IpsecSa>();
  /** Establishment time (ms) of each SA. */
  private readonly started = new Map<string, number>();
  /** Count of full loads and of daemon starts (tests check that account changes never restart). */
  loads = 0;
  starts = 0;

  constructor(private readonly clock: Clock = systemClock) {}

  async apply(desired: IpsecDesired): Promise<void> {
    if (!this.running) {
      this.running = true;
      this.pid = this.nextPid++;
      this.starts++;
      this.sas.clear();
    }
    this.wanted = true;
    this.desired = desired;
    this.loads++;
    const keep = new Set(desired.users.map((u) => u.username));
    for (const name of [...this.users.keys()]) if (!keep.has(name)) await this.removeUser(name);
    for (const user of desired.users) this.users.set(user.username, { ...user });
  }

  async upsertUser(user: IpsecUser): Promise<void> {
    this.requireRunning();
    this.users.set(user.username, { ...user });
  }

  async removeUser(username: string): Promise<void> {
    this.requireRunning();
    this.users.delete(username);
    await this.terminate(username);
  }

  async terminate(username: string): Promise<number> {
    let n = 0;
    for (const [id, sa] of this.sas) if (sa.username === username) { this.sas.delete(id); n++; }
    return n;
  }

  async listSas(): Promise<IpsecSa[]> {
    if (!this.running) return [];
    const now = this.clock.now().getTime();
    return [...this.sas.values()].map((sa) => ({ ...sa, establishedSeconds: Math.max(0, Math.floor((now - (this.started.get(sa.uniqueId) ?? now)) / 1000)) }));
  }

  /** The twin's TUN "exists" while it runs (as with kernel-libipsec). */
  async device(): Promise<string | null> {
    return this.running ? IPSEC_DEVICE : null;
  }

  async status(): Promise<IpsecStatus> {
    return { crashed: this.wanted && !this.running, running: this.running, pid: this.running ? this.pid : null, version: this.running ? '5.9.8' : '' };
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wanted = false;
    this.pid = null;
    this.users.clear();
    this.sas.clear();
  }

  async close(): Promise<void> {}

  /** The configuration of the last full load (null before). */
  get applied(): IpsecDesired | null {
    return this.desired;
  }

  /** A client connecting from `remoteHost` with EAP-MSCHAPv2 credentials; throws like an AUTHENTICATION_FAILED. */
  connect(username: string, password: string, remoteHost = '198.51.100.7'): IpsecSa {
    this.requireRunning();
    const user = this.users.get(username);
    if (!user || user.password !== password) throw new IpsecError('AUTHENTICATION_FAILED');
    const sa: IpsecSa = {
      conn: connName(username), uniqueId: String(this.nextSa++), username, state: 'ESTABLISHED', remoteHost,
      virtualIp: user.address, establishedSeconds: 0, bytesIn: 0, bytesOut: 0,
    };
    this.sas.set(sa.uniqueId, sa);
    this.started.set(sa.uniqueId, this.clock.now().getTime());
    return sa;
  }

  /**
   * Traffic through an SA (the CHILD SAs' counters grow, as charon's `bytes-in`/`bytes-out` would): `bytesIn` from
   * the client into the server, `bytesOut` from the server to the client. Throws for an SA that is not live.
   */
  simulateTraffic(uniqueId: string, bytesIn: number, bytesOut: number): void {
    const sa = this.sas.get(uniqueId);
    if (!sa) throw new IpsecError(`no IKE SA ${uniqueId}`);
    sa.bytesIn += bytesIn;
    sa.bytesOut += bytesOut;
  }

  /** The daemon dies (kill -9): SAs and loaded credentials are gone; it is still wanted. */
  crash(): void {
    this.running = false;
    this.pid = null;
    this.users.clear();
    this.sas.clear();
  }

  private requireRunning(): void {
    if (!this.running) throw new IpsecError('charon is not running');
  }
}
