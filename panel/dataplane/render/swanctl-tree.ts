// Pure mapping of the IKEv2 settings and accounts onto swanctl/vici trees (connections, pools, EAP secrets).
import type { Ikev2AdvancedSettings } from '../../schemas/ikev2.ts';
import { connName, poolName, secretName, type IpsecUser } from '../ipsec/ipsec.ts';
import type { ViciTree } from '../ipsec/linux/vici-client.ts';

/** Name of the connection loaded with every full load to check the proposals (its identity never matches). */
const PROBE_CONN = 'vpnhost-probe';
const PROBE_ID = 'vpnhost-probe.invalid';

/** swanctl proposals from an ipsec.conf list: the trailing `!` (strict) dropped, swanctl lists are always strict. */
export function proposalList(value: string): string[] {
  return value.replace(/!$/, '').split(',').map((p) => p.trim()).filter(Boolean);
}

const ACTION: Record<string, string> = { none: 'none', clear: 'clear', hold: 'trap', restart: 'start' };
const MODE: Record<string, string> = { tunnel: 'tunnel', transport: 'transport', transport_proxy: 'transport', passthrough: 'pass', drop: 'drop' };
const UNIQUE: Record<string, string> = { yes: 'replace', no: 'no', never: 'never', replace: 'replace', keep: 'keep' };
const REVOCATION: Record<string, string> = { yes: 'strict', ifuri: 'ifuri', no: 'relaxed' };

/**
 * The IKE_SA/CHILD_SA timing of the settings (ipsec.conf semantics): the IKE SA lives `ikelifetime` and is
 * re-keyed (`reauth=no`) or re-authenticated (`reauth=yes`) `margintime` before it ends, randomised by
 * `rekeyfuzz` % of the margin; `rekey=no` leaves re-keying to the client (0 = never by us).
 */
export function timings(s: Ikev2AdvancedSettings): { ike: ViciTree; child: ViciTree } {
  const ikeRenew = s.rekey === 'yes' ? Math.max(s.ikelifetime - s.margintime, 0) : 0;
  const childRenew = s.rekey === 'yes' ? Math.max(s.lifetime - s.margintime, 0) : 0;
  const fuzz = String(Math.floor((s.margintime * s.rekeyfuzz) / 100));
  return {
    ike: {
      rekey_time: s.reauth === 'yes' ? '0' : `${ikeRenew}s`,
      reauth_time: s.reauth === 'yes' ? `${ikeRenew}s` : '0',
      over_time: `${s.margintime}s`,
      rand_time: `${fuzz}s`,
    },
    child: { rekey_time: `${childRenew}s`, life_time: `${s.lifetime}s`, rand_time: `${fuzz}s` },
  };
}

/** Options shared by every connection: proposals, DPD, encapsulation, fragmentation, MOBIKE, uniqueness, keying tries. */
function connBase(s: Ikev2AdvancedSettings): ViciTree {
  return {
    version: '2',
    proposals: proposalList(s.ike),
    encap: s.forceencaps,
    fragmentation: s.fragmentation,
    mobike: s.mobike,
    dpd_delay: `${s.dpddelay}s`,
    dpd_timeout: `${s.dpdtimeout}s`,
    keyingtries: String(s.keyingtries),
    unique: UNIQUE[s.uniqueids] ?? 'no',
    pull: s.modeconfig === 'pull' ? 'yes' : 'no',
    send_certreq: 'no',
    ...timings(s).ike,
  };
}

function child(s: Ikev2AdvancedSettings): ViciTree {
  return {
    local_ts: ['0.0.0.0/0'],
    esp_proposals: proposalList(s.esp),
    mode: MODE[s.type] ?? 'tunnel',
    policies: s.installpolicy,
    ipcomp: s.compress,
    inactivity: `${s.inactivity}s`,
    dpd_action: ACTION[s.dpdaction] ?? 'clear',
    close_action: ACTION[s.closeaction] ?? 'none',
    ...timings(s).child,
  };
}

/**
 * The server side of every connection: authenticated by its certificate, found by `id` among the loaded credentials
 * (`swanctl --load-creds` loads x509/server.pem and its key). Naming no certificate file keeps a connection small:
 * charon does not parse the certificate again for each of 10,000 connections.
 */
function local(serverId: string): ViciTree {
  return { auth: 'pubkey', id: serverId };
}

/**
 * The connection of one account while identity leases are off (`VPNHOST_IPSEC_IDENTITY_LEASES=0`, or charon in
 * another namespace than the panel): selected by the client's IKE identity (= its username), EAP-MSCHAPv2 with the
 * same EAP identity, the account's own one-address pool. An account change is one load-conn/unload-conn (the others'
 * SAs are untouched), but every connect costs charon a match against every account's connection.
 */
export function userConn(s: Ikev2AdvancedSettings, user: IpsecUser, serverId: string): ViciTree {
  return {
    [connName(user.username)]: {
      ...connBase(s),
      pools: [poolName(user.username)],
      local: local(serverId),
      remote: { auth: 'eap-mschapv2', id: user.username, eap_id: user.username, revocation: REVOCATION[s.strictcrlpolicy] ?? 'relaxed' },
      children: { [connName(user.username)]: child(s) },
    },
  };
}

/** The probe connection (same options; its identity never matches a client): a full load fails on bad proposals. */
export function probeConn(s: Ikev2AdvancedSettings, serverId: string): ViciTree {
  return {
    [PROBE_CONN]: {
      ...connBase(s),
      local: local(serverId),
      remote: { auth: 'eap-mschapv2', id: PROBE_ID, eap_id: PROBE_ID },
      children: { [PROBE_CONN]: child(s) },
    },
  };
}

/** Name of the one connection of every client while identity leases are on (see {@link sharedConn}). */
export const SHARED_CONN = 'vpnhost-eap';

/**
 * The connection every client uses while the panel's identity lease responder runs (the default): any IKE identity
 * (Windows' built-in client sends its IP address, the strongSwan app and Apple profiles the username), the EAP identity
 * asked for with EAP-Identity, EAP-MSCHAPv2 checked against the secret of that identity, and the address from the
 * `dhcp` pool, which the responder answers with the account's own address and DNS. One connection instead of one per
 * account: charon matches each IKE_SA_INIT and IKE_AUTH against every loaded connection, which costs about 0.65 s per
 * connect with 10,000 of them (test/bench/panel-ikev2-windows.ts) and about 65 ms with this one.
 */
export function sharedConn(s: Ikev2AdvancedSettings, serverId: string): ViciTree {
  return {
    [SHARED_CONN]: {
      ...connBase(s),
      pools: ['dhcp'],
      local: local(serverId),
      remote: { auth: 'eap-mschapv2', id: '%any', eap_id: '%any', revocation: REVOCATION[s.strictcrlpolicy] ?? 'relaxed' },
      children: { [SHARED_CONN]: child(s) },
    },
  };
}

/** The account's pool: exactly its `allowed_IPs` address, with the server's DNS. */
export function userPool(user: IpsecUser): ViciTree {
  return { [poolName(user.username)]: { addrs: `${user.address}/32`, ...(user.dns.length ? { dns: user.dns } : {}) } };
}

/** The account's EAP secret (vici `load-shared` arguments). */
export function userSecret(user: IpsecUser): ViciTree {
  return { id: secretName(user.username), type: 'EAP', data: user.password, owners: [user.username] };
}
