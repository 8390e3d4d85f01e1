// Linux IPsec seam: the panel's own charon-systemd (own strongswan.conf, vici socket, pid file), swanctl + vici.
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DaemonSupervisor } from '../../linux/daemon-supervisor.ts';
import type { DaemonRunner } from '../../linux/runner.ts';
import { parseListSa } from '../../render/parse-vici-sas.ts';
import { renderStrongswanConf } from '../../render/strongswan-conf.ts';
import { renderSwanctlConf } from '../../render/swanctl-conf.ts';
import { userConn, userPool, userSecret } from '../../render/swanctl-tree.ts';
import {
  connName, IPSEC_DEVICE, IpsecError, poolName, secretName, type Ipsec, type IpsecDesired, type IpsecSa, type IpsecStatus, type IpsecUser,
} from '../ipsec.ts';
import { IdentityLeaseServer, type IdentityLeaseOptions } from './identity-lease-server.ts';
import { ViciSession, type ViciTree } from './vici-client.ts';

/** EAP secrets per pipelined vici write. */
const SECRET_BATCH = 200;

/** Options of {@link CharonIpsec}. */
export interface CharonIpsecOptions {
  /** Runs swanctl and starts charon (in its namespace). */
  runner: DaemonRunner;
  /** Directory of the daemon's files (strongswan.conf, vici socket, pid, log, swanctl/). */
  dir: string;
  /** Load `kernel-libipsec` (ESP in userspace over a TUN device) — for hosts/sandboxes without XFRM. */
  libipsec?: boolean;
  /** The daemon binary (default /usr/sbin/charon-systemd). */
  charon?: string;
  /** How long to wait for the vici socket to answer after a start (default 15 s). */
  startTimeoutMs?: number;
  /**
   * Serve every client through one shared connection whose addresses come from the panel's identity lease responder
   * ({@link IdentityLeaseServer}): any IKE identity (Windows' built-in client sends its IP address) and a connect cost
   * that does not grow with the number of accounts. Without it, each account gets its own connection and pool. The
   * responder is a socket of this process, so charon must reach its address (same namespace, or a route to it).
   */
  identityLeases?: IdentityLeaseOptions;
}

/**
 * strongSwan's charon run by the panel. The daemon is `charon-systemd` (no fork, no fixed /var/run pid file, so a
 * second charon — a test client — can run beside it), supervised by a {@link DaemonSupervisor}: spawned through the
 * runner in its own session (it outlives a panel restart and is adopted by its pid file), with `STRONGSWAN_CONF`
 * pointing at the rendered strongswan.conf, whose vici socket lives in `dir`; ready once vici answers. After a crash
 * the watchdog starts it again through the subsystem's reconcile (its credentials and connections come from the store).
 * Full loads send certificates, key and EAP secrets over vici (never written to disk) and write swanctl.conf with
 * the connections and pools for `swanctl --load-pools/--load-conns` (stale ones are unloaded by swanctl); one account's
 * change goes over vici — with identity leases its EAP secret (`load-shared`/`unload-shared`) and one entry of the
 * responder's map, else also its pool and connection — so it never restarts the daemon and other SAs stay up. Log
 * levels change with `reload-settings`, not a restart.
 */
export class CharonIpsec implements Ipsec {
  private readonly paths;
  private wanted = false;
  private last: IpsecDesired | null = null;
  private strongswanConf = '';
  /** swanctl.conf of the last full load while nothing changed per account since ('' = unknown: load again). */
  private loadedSwanctl = '';
  private loadedPid: number | null = null;
  /** Fingerprint of the certificates and key charon holds (loaded by us into that pid). */
  private loadedCerts = '';
  /** The DHCP responder of the shared EAP connection, when identity leases are on. */
  readonly leases: IdentityLeaseServer | null;
  private readonly daemon: DaemonSupervisor;

  constructor(private readonly opts: CharonIpsecOptions) {
    this.leases = opts.identityLeases ? new IdentityLeaseServer(opts.identityLeases) : null;
    const swanctl = join(opts.dir, 'swanctl');
    this.paths = {
      conf: join(opts.dir, 'strongswan.conf'), vici: join(opts.dir, 'charon.vici'), pid: join(opts.dir, 'charon.pid'),
      log: join(opts.dir, 'charon.log'), swanctl, swanctlConf: join(swanctl, 'swanctl.conf'),
    };
    this.daemon = new DaemonSupervisor(opts.runner, {
      name: 'charon', cmd: opts.charon ?? '/usr/sbin/charon-systemd', args: [], env: { STRONGSWAN_CONF: this.paths.conf },
      detached: true, pidPath: this.paths.pid, writesPidFile: false, marker: { env: `STRONGSWAN_CONF=${this.paths.conf}` },
      outputPath: join(opts.dir, 'charon.out'), leftover: 'adopt', restart: null, stopGraceMs: 5_000,
      readyTimeoutMs: opts.startTimeoutMs ?? 15_000,
      ready: () => this.vici((s) => s.request('version')).then(() => true),
    });
  }

  /** The vici socket path (tests talk to it). */
  get viciSocket(): string {
    return this.paths.vici;
  }

  async apply(desired: IpsecDesired): Promise<void> {
    this.wanted = true;
    if (this.leases) {
      await this.leases.start().catch((err: Error) => {
        throw new IpsecError(`identity leases: cannot listen on ${this.leases!.address}:${this.leases!.boundPort} (${err.message}); free the port, set ` +
          'VPNHOST_IPSEC_LEASE_ADDRESS to another local address, or VPNHOST_IPSEC_IDENTITY_LEASES=0');
      });
      this.leases.setUsers(desired.users);
    }
    const conf = renderStrongswanConf({
      viciSocket: this.paths.vici, logFile: this.paths.log, libipsec: !!this.opts.libipsec, settings: desired.settings,
      ...(this.leases ? { identityLeaseServer: this.leases.address } : {}),
    });
    await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    const running = await this.alive();
    if (conf !== this.strongswanConf || !running) {
      await writeFile(this.paths.conf, conf, { mode: 0o600 });
      this.strongswanConf = conf;
      if (running) await this.vici((s) => s.command('reload-settings'));
    }
    if (!running) await this.start();
    // A reconcile of an unchanged store costs nothing: the same desired state is not loaded twice
    const swanctlConf = renderSwanctlConf(desired, { shared: this.leases !== null });
    const fingerprint = createHash('sha256').update(JSON.stringify(desired)).digest('hex');
    if (running && fingerprint === this.loadedSwanctl && (await this.pid()) === this.loadedPid) {
      this.last = desired;
      return;
    }
    this.loadedSwanctl = '';
    await this.loadCredentials(desired);
    await mkdir(this.paths.swanctl, { recursive: true, mode: 0o700 });
    await writeFile(this.paths.swanctlConf, swanctlConf, { mode: 0o600 });
    if (this.leases) await this.unloadAccountPools();
    else await this.swanctl(['--load-pools', '--file', this.paths.swanctlConf]);
    await this.swanctl(['--load-conns', '--file', this.paths.swanctlConf]);
    this.loadedSwanctl = fingerprint;
    this.loadedPid = await this.pid();
    this.last = desired;
  }

  /**
   * Certificates, the server key and the EAP secrets go to charon over vici only — never into a file (the store
   * keeps them sealed). A changed certificate or key first clears charon's credentials (`clear-creds`) so no stale
   * certificate with the same identity is picked. Secrets are loaded in pipelined batches; secrets of accounts no
   * longer wanted are unloaded (`get-shared` lists what is loaded).
   */
  private async loadCredentials(desired: IpsecDesired): Promise<void> {
    const certs = createHash('sha256').update(`${desired.caCert}\0${desired.serverCert}\0${desired.serverKey}`).digest('hex');
    const wanted = new Set(desired.users.map((u) => secretName(u.username)));
    await this.vici(async (s) => {
      if (certs !== this.loadedCerts || (await this.pid()) !== this.loadedPid) {
        await s.command('clear-creds');
        await s.commands([
          ['load-cert', { type: 'X509', flag: 'CA', data: desired.caCert }],
          ['load-cert', { type: 'X509', flag: 'NONE', data: desired.serverCert }],
          ['load-key', { type: 'rsa', data: desired.serverKey }],
        ]);
        this.loadedCerts = certs;
      }
      for (let i = 0; i < desired.users.length; i += SECRET_BATCH) {
        await s.commands(desired.users.slice(i, i + SECRET_BATCH).map((u) => ['load-shared', userSecret(u)] as [string, ViciTree]));
      }
      const loaded = await s.request('get-shared');
      const stale = (Array.isArray(loaded.keys) ? loaded.keys : []).filter((id) => id.startsWith('s-') && !wanted.has(id));
      for (let i = 0; i < stale.length; i += SECRET_BATCH) {
        await s.commands(stale.slice(i, i + SECRET_BATCH).map((id) => ['unload-shared', { id }] as [string, ViciTree]));
      }
    });
  }

  /**
   * With identity leases no pool is loaded; per-account pools a charon still holds (loaded while leases were off) are
   * unloaded best-effort: charon refuses to unload a pool with an online lease, which goes with that client's SA.
   */
  private async unloadAccountPools(): Promise<void> {
    await this.vici(async (s) => {
      const names = Object.keys(await s.request('get-pools')).filter((name) => name.startsWith('p-'));
      for (let i = 0; i < names.length; i += SECRET_BATCH) {
        await s.commands(names.slice(i, i + SECRET_BATCH).map((name) => ['unload-pool', { name }] as [string, ViciTree])).catch(() => undefined);
      }
    });
  }

  async upsertUser(user: IpsecUser): Promise<void> {
    const d = this.requireLoaded();
    this.loadedSwanctl = '';
    if (this.leases) {
      // the shared connection serves every account: its secret and its lease are all an account has
      this.leases.upsert(user);
      await this.vici((s) => s.commands([['load-shared', userSecret(user)]]));
      return;
    }
    await this.vici((s) => s.commands([
      ['load-shared', userSecret(user)], ['load-pool', userPool(user)], ['load-conn', userConn(d.settings, user, d.serverId)],
    ]));
  }

  async removeUser(username: string): Promise<void> {
    this.requireLoaded();
    this.loadedSwanctl = '';
    this.leases?.remove(username);
    await this.terminate(username);
    await this.vici(async (s) => {
      if (!this.leases) {
        await s.request('unload-conn', { name: connName(username) });
        await s.request('unload-pool', { name: poolName(username) });
      }
      await s.request('unload-shared', { id: secretName(username) });
    });
  }

  async terminate(username: string): Promise<number> {
    const sas = (await this.listSas()).filter((sa) => sa.conn === connName(username) || sa.username === username);
    if (sas.length === 0) return 0;
    await this.vici(async (s) => {
      for (const sa of sas) await s.request('terminate', { 'ike-id': sa.uniqueId, force: 'yes', timeout: '-1' });
    });
    return sas.length;
  }

  async listSas(): Promise<IpsecSa[]> {
    if (!(await this.alive())) return [];
    const { events } = await this.vici((s) => s.stream('list-sas', 'list-sa', { noblock: 'yes' }));
    return events.flatMap(parseListSa);
  }

  /**
   * The TUN device charon holds: the `iff:` line of the fdinfo of its open `/dev/net/tun` descriptor (Linux prints
   * the attached interface there). null without libipsec, while charon is not running or before the device exists.
   */
  async device(): Promise<string | null> {
    const pid = this.opts.libipsec ? await this.pid() : null;
    if (pid === null) return null;
    try {
      for (const fd of await readdir(`/proc/${pid}/fd`)) {
        if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) !== '/dev/net/tun') continue;
        const iff = /^iff:\s*(\S+)/m.exec(await readFile(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
        if (iff) return iff[1];
      }
    } catch {
      return null;
    }
    return null;
  }

  async status(): Promise<IpsecStatus> {
    const pid = await this.pid();
    const running = pid !== null;
    let version = '';
    if (running) {
      version = await this.vici(async (s) => {
        const v = await s.request('version');
        return typeof v.version === 'string' ? v.version : '';
      }).catch(() => '');
    }
    return { crashed: this.wanted && !running, running, pid, version };
  }

  /** Stops charon (SIGTERM, then SIGKILL after 5 s) and removes its pid file and socket. */
  async stop(): Promise<void> {
    this.wanted = false;
    this.last = null;
    this.strongswanConf = '';
    this.loadedSwanctl = '';
    this.loadedCerts = '';
    await this.daemon.stop();
    await rm(this.paths.pid, { force: true });
    await rm(this.paths.vici, { force: true });
    await this.leases?.close();
  }

  /** Closes the identity lease responder's socket (charon keeps running; the next panel binds it again). */
  async close(): Promise<void> {
    await this.leases?.close();
  }

  private requireLoaded(): IpsecDesired {
    if (!this.last) throw new IpsecError('charon has no configuration loaded');
    return this.last;
  }

  private async start(): Promise<void> {
    await rm(this.paths.vici, { force: true });
    try {
      await this.daemon.start();
    } catch (err) {
      throw new IpsecError(`${(err as Error).message} (see ${this.paths.log})`);
    }
    if (this.opts.libipsec) await this.checkDevice();
  }

  /**
   * kernel-libipsec names its TUN `ipsec%d`; the panel's rules and shaping name {@link IPSEC_DEVICE}. Another device of
   * that name in the namespace would give charon `ipsec1` and the policy would miss IKEv2 traffic: refuse to run so.
   */
  private async checkDevice(): Promise<void> {
    let device: string | null = null;
    for (let i = 0; i < 40 && device === null; i++) {
      device = await this.device();
      if (device === null) await new Promise((r) => setTimeout(r, 50));
    }
    if (device === IPSEC_DEVICE) return;
    await this.stop();
    throw new IpsecError(`charon: its TUN device is ${device ?? 'missing'}, not ${IPSEC_DEVICE} (is another ${IPSEC_DEVICE} in this namespace?)`);
  }

  /** `swanctl <args> --uri unix://<socket>` with SWANCTL_DIR = our swanctl directory. */
  private async swanctl(args: string[]): Promise<string> {
    const result = await this.opts.runner.run('swanctl', [...args, '--uri', `unix://${this.paths.vici}`], {
      env: { SWANCTL_DIR: this.paths.swanctl }, allowFailure: true,
    });
    if (result.exitCode !== 0) {
      const line = `${result.stdout}\n${result.stderr}`.split('\n').map((l) => l.trim()).filter((l) => /fail|error|invalid/i.test(l)).pop();
      throw new IpsecError(`swanctl: ${line ?? `exit ${result.exitCode}`}`);
    }
    return result.stdout;
  }

  private async vici<T>(fn: (s: ViciSession) => Promise<T>): Promise<T> {
    const session = await ViciSession.connect(this.paths.vici);
    try {
      return await fn(session);
    } finally {
      session.close();
    }
  }

  /** The pid of the live charon (ours, or adopted from the pid file), else null. */
  private async pid(): Promise<number | null> {
    return this.daemon.alive();
  }

  private async alive(): Promise<boolean> {
    return (await this.pid()) !== null;
  }
}
