// A strongSwan IKEv2 client for system tests: its own charon-systemd (strongswan.conf, vici socket, pid file) in a namespace.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderStrongswanConf } from '../../panel/dataplane/render/strongswan-conf.ts';
import { IKEV2_DEFAULTS } from '../../panel/schemas/ikev2.ts';
import { execIn } from './netns.ts';

/** Where the client connects and what it routes through the tunnel. */
export interface StrongswanClientOptions {
  /** The panel's IKE address. */
  server: string;
  /** The client's `remote_ts` (networks routed through the tunnel). */
  remoteTs: string[];
}

/** What the client needs of the account's `.sswan` profile. */
export interface SswanProfile {
  remote: { cert: string; id: string };
  local: { eap_id: string };
}

/** A strongSwan client (charon-systemd with kernel-libipsec, swanctl over its own vici socket) inside `ns`. */
export class StrongswanClient {
  readonly vici: string;
  private readonly swanctl: string;

  constructor(private readonly ns: string, private readonly dir: string, private readonly opts: StrongswanClientOptions) {
    this.vici = join(dir, 'charon.vici');
    this.swanctl = join(dir, 'swanctl');
    for (const sub of ['x509ca', 'x509', 'private']) mkdirSync(join(this.swanctl, sub), { recursive: true });
    writeFileSync(join(dir, 'strongswan.conf'), renderStrongswanConf({
      viciSocket: this.vici, logFile: join(dir, 'charon.log'), libipsec: true, settings: { ...IKEV2_DEFAULTS, charondebug_ike: 1, charondebug_cfg: 1 },
    }));
  }

  /** Starts the client's charon and waits for its vici socket. */
  async start(): Promise<void> {
    await execIn(this.ns, 'env', [`STRONGSWAN_CONF=${join(this.dir, 'strongswan.conf')}`, 'start-stop-daemon', '--start', '--quiet', '--background',
      '--make-pidfile', '--pidfile', join(this.dir, 'charon.pid'), '--exec', '/usr/sbin/charon-systemd']);
    for (let i = 0; i < 100; i++) {
      if ((await this.run(['--version', '--daemon'], true)).exitCode === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail('client charon did not start');
  }

  /**
   * Loads the profile's data: CA (DER from the .sswan), server identity and the EAP credentials. `like: 'windows'`
   * configures the client as Windows' built-in one: no IKE identity (charon then sends its IP address, as Windows
   * does), the username only as EAP identity, Windows' default proposals (AES-256/SHA-1/MODP-1024, ESP AES-256/SHA-1).
   */
  async load(profile: SswanProfile, password: string, opts: { like?: 'strongswan' | 'windows' } = {}): Promise<void> {
    writeFileSync(join(this.swanctl, 'x509ca', 'ca.der'), Buffer.from(profile.remote.cert, 'base64'));
    const user = profile.local.eap_id;
    const windows = opts.like === 'windows';
    writeFileSync(join(this.swanctl, 'swanctl.conf'), `connections {
  panel {
    version = 2
    remote_addrs = ${this.opts.server}
    vips = 0.0.0.0
    proposals = ${windows ? 'aes256-sha1-modp1024' : 'aes256gcm16-sha384-prfsha384-ecp384'}
    local { auth = eap-mschapv2${windows ? '' : `
      id = ${user}`}
      eap_id = ${user} }
    remote { auth = pubkey
      id = ${profile.remote.id} }
    children { panel { remote_ts = ${this.opts.remoteTs.join(', ')}
      esp_proposals = ${windows ? 'aes256-sha1' : 'aes256gcm16-ecp384'} } }
  }
}
secrets { eap-user { id = ${user}
  secret = "${password}" } }
`);
    await this.run(['--load-all', '--noprompt', '--file', join(this.swanctl, 'swanctl.conf')]);
  }

  /** `swanctl --initiate`: true when the SA came up. */
  async connect(): Promise<boolean> {
    return (await this.run(['--initiate', '--child', 'panel', '--timeout', '15'], true)).exitCode === 0;
  }

  /** Bytes over the client's live CHILD SAs (sums of `bytes-in` / `bytes-out` of `--list-sas --raw`). */
  async childBytes(): Promise<{ in: number; out: number }> {
    const raw = (await this.run(['--list-sas', '--raw'])).stdout;
    const sum = (key: string) => [...raw.matchAll(new RegExp(`\\b${key}=(\\d+)`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
    return { in: sum('bytes-in'), out: sum('bytes-out') };
  }

  /** {@link saCount} once it reached 0 or after 5 s (a delete from the server reaches the client asynchronously). */
  async saCountAfterSettling(): Promise<number> {
    for (let i = 0; i < 50 && (await this.saCount()) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    return this.saCount();
  }

  async saCount(): Promise<number> {
    return ((await this.run(['--list-sas', '--raw'])).stdout.match(/list-sa event/g) ?? []).length;
  }

  async run(args: string[], allowFailure = false) {
    return execIn(this.ns, 'env', [`SWANCTL_DIR=${this.swanctl}`, 'swanctl', ...args, '--uri', `unix://${this.vici}`], { allowFailure, timeoutMs: 30_000 });
  }
}

/** Pings `ip` from `ns` (one packet per try, up to `attempts` tries): true when one answered. */
export async function pings(ns: string, ip: string, attempts = 20): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if ((await execIn(ns, 'ping', ['-c', '1', '-W', '1', ip], { allowFailure: true })).exitCode === 0) return true;
  }
  return false;
}
