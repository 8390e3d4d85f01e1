// Every row a restore would bring, checked with the API's own checks before the live store is touched.
import Database from 'better-sqlite3';
import { checkConf, checkFilterRule, checkServer } from '../../dataplane/firewall/firewall-checks.ts';
import { FirewallError } from '../../dataplane/firewall/firewall.ts';
import { checkInterfaceSpec } from '../../dataplane/spec-check.ts';
import { ApiError, E } from '../../http/errors.ts';
import { parseInput } from '../../http/validate.ts';
import { backupConfigUpdateSchema, checkBackupConfig } from '../../schemas/backups.ts';
import { dnsUpdateSchema } from '../../schemas/dns.ts';
import { systemConfigUpdateSchema } from '../../../shared/wire/system.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import { openDatabase, type Db } from '../../store/db.ts';
import { AccountsRepository, type AccountRow } from '../../store/repositories/accounts.ts';
import { PortForwardsRepository } from '../../store/repositories/port-forwards.ts';
import { ServersRepository, type ServerRow } from '../../store/repositories/servers.ts';
import { checkAccountCreate } from '../account-checks.ts';
import { formatIpv4 } from '../addressing.ts';
import { interfaceSpec, serverFirewallSpec } from '../dataplane-specs.ts';
import { desiredServer } from '../desired-state.ts';
import type { HostNetworkView } from '../host-networks.ts';
import { checkForwardCreate } from '../port-forwards.ts';
import { checkServerCreate, EDIT_PORT_RANGE } from '../server-checks.ts';
import { STATISTICS_TABLES } from './archive-format.ts';
import { BACKUP_CONFIG_SETTING, DEFAULT_BACKUP_CONFIG } from './backup-config.ts';

/** What the checks compare the archive's rows with. */
export interface SnapshotCheckContext {
  /** The panel's data key: every sealed value of the archive must open with it. */
  box: SecretBox;
  /** The host's networks, the live panel's own server interfaces left out. */
  host: HostNetworkView;
  /** The account limit the restored store may hold, given the snapshot (whose license table it brings). */
  accountLimit: (snapshot: Db) => number;
  /** The panel's API TCP port (no TCP forward may take it), null when unknown. */
  apiPort: number | null;
  /** `--external-interface` (NAT egress of servers whose row names none). */
  externalInterface?: string | null;
}

/** A sealed value anywhere inside a text (columns and JSON settings). */
const SEALED = /enc:v1:[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*/g;
/** Tables the generic sealed-value scan leaves out: checked row by row, or holding no text worth a full scan. */
const SCANNED_ELSEWHERE = new Set<string>(['wireguard_servers', 'accounts', 'schema_migrations', ...STATISTICS_TABLES]);
const ANOTHER_KEY = 'a secret sealed with another data key (a row of another panel)';

/** `Error backup reader: <what>: <reason>` for the first bad row. */
function refuse(what: string, err: unknown): never {
  const reason = err instanceof FirewallError ? err.text : err instanceof Error ? err.message : String(err);
  throw new ApiError(E.BACKUP_READER, `${what}: ${reason}`);
}

/** Runs `check` for one row; any failure names the row. */
function row<T>(what: string, check: () => T): T {
  try {
    return check();
  } catch (err) {
    return refuse(what, err);
  }
}

function open(box: SecretBox, sealed: string): string {
  try {
    return box.open(sealed);
  } catch {
    throw new Error(ANOTHER_KEY);
  }
}

/**
 * Checks the snapshot at `path` (already migrated by `prepareSnapshot`) row by row, in id order, with the checks the
 * API applies to a request creating that row, against the rows checked before it (a scratch store in memory) and
 * the host's networks: servers (names, interface names `wgN`, keys, ports, refused address ranges, overlaps), accounts
 * (the license's account limit, names, addresses, keys), port forwards, filter rules, firewall, DNS, system and backup
 * settings; then what the data plane would refuse of each server (marks, NAT interface, interface spec), the
 * account counters, and that every sealed value opens with this panel's data key. Throws `Error backup reader:
 * <row>: <reason>` for the first bad row; changes nothing but `license.last_check` of the snapshot. Yields to the event
 * loop every {@link ROWS_PER_TURN} rows, so the panel keeps answering while 50,000 accounts are checked.
 */
export async function checkSnapshotRows(path: string, ctx: SnapshotCheckContext): Promise<void> {
  const snap = new Database(path, { fileMustExist: true });
  const scratch = openDatabase(':memory:');
  try {
    const stores = {
      servers: new ServersRepository(scratch),
      accounts: new AccountsRepository(scratch),
      forwards: new PortForwardsRepository(scratch),
    };
    const limit = ctx.accountLimit(snap);
    const serverRows = snap.prepare<[], ServerRow>('SELECT * FROM wireguard_servers ORDER BY id').all();
    for (const server of serverRows) checkServerRow(server, stores, ctx);
    let rows = 0;
    for (const account of snap.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY id').iterate()) {
      checkAccountRow(account, stores, ctx, limit);
      if (++rows % ROWS_PER_TURN === 0) await nextTurn();
    }
    checkCounters(snap);
    const nameOf = snap.prepare<[number], string>('SELECT name FROM accounts WHERE id = ?').pluck();
    const forwards = snap.prepare<[], { server_id: number; dst_port: number; protocol: string; account_id: number; to_port: number }>(
      'SELECT server_id, dst_port, protocol, account_id, to_port FROM port_forwards ORDER BY server_id, dst_port, protocol').all();
    for (const f of forwards) {
      row(`port forward ${f.dst_port}/${f.protocol}`, () => {
        const server = stores.servers.getById(f.server_id);
        const body = { dst_port: String(f.dst_port), protocol: f.protocol, to_peer: nameOf.get(f.account_id), to_port: String(f.to_port) };
        stores.forwards.insert(checkForwardCreate(body, server?.name ?? `#${f.server_id}`, { ...stores, apiPort: ctx.apiPort }).values);
      });
      if (++rows % ROWS_PER_TURN === 0) await nextTurn();
    }
    const conf = checkPolicy(snap);
    for (const server of serverRows) {
      row(`wireguard server '${server.name}'`, () => {
        const { peers } = desiredServer(server, stores.accounts);
        checkServer(serverFirewallSpec(server, peers, stores.forwards.listForwards(server.id), ctx.externalInterface), conf);
      });
      await nextTurn();
    }
    checkSettings(snap);
    checkSealedValues(snap, ctx.box);
  } finally {
    scratch.close();
    snap.close();
  }
}

/** Rows checked between two turns of the event loop (about 25 ms of work on a busy core). */
const ROWS_PER_TURN = 100;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

type ScratchStores = { servers: ServersRepository; accounts: AccountsRepository; forwards: PortForwardsRepository };

/** One server: POST /wireguard's checks (any listen port, as an edit may set), its derived columns, its interface spec. */
function checkServerRow(server: ServerRow, stores: ScratchStores, ctx: SnapshotCheckContext): void {
  row(`wireguard server '${server.name}'`, () => {
    const body = {
      name: server.name, interface_name: server.interface_name, private_key: open(ctx.box, server.private_key),
      public_key: server.public_key, listen_port: String(server.listen_port), mtu: String(server.mtu),
      keep_alive: String(server.keep_alive), allowed_ips: server.allowed_ips, endpoint: server.endpoint,
      address: server.address, internal_traffic: String(server.internal_traffic), external_ip: server.external_ip,
      dns_1: server.dns_1, dns_2: server.dns_2, ipv6: String(server.ipv6), address_ipv6: server.address_ipv6,
      dns_1_ipv6: server.dns_1_ipv6, dns_2_ipv6: server.dns_2_ipv6, b_download: String(server.b_download),
      b_upload: String(server.b_upload), ikev2: String(server.ikev2),
    };
    const input = checkServerCreate(body, { ...stores, host: ctx.host }, EDIT_PORT_RANGE);
    if (input.address?.first !== server.net_first || input.address.last !== server.net_last) {
      throw new Error('net_first/net_last do not match its address');
    }
    checkInterfaceSpec(interfaceSpec(server, ctx.box));
    // Accounts keep their IPv6 address when IPv6 is switched off on their server (its subnet stays stored): the
    // accounts are checked against that subnet.
    stores.servers.restore({ ...server, ipv6: server.address_ipv6 ? 1 : server.ipv6 });
  });
}

/** One account: POST /account's checks in order (account limit first), then it joins the scratch store. */
function checkAccountRow(account: AccountRow, stores: ScratchStores, ctx: SnapshotCheckContext, limit: number): void {
  row(`account '${account.name}'`, () => {
    const body = {
      wg_name: stores.servers.getById(account.server_id)?.name ?? '', allowed_IPs: formatIpv4(account.ip),
      allowed_IPs_ipv6: account.allowed_ips_ipv6 ?? '', name: account.name, username: account.username,
      password: open(ctx.box, account.password), status: account.status,
      private_key: account.private_key ? open(ctx.box, account.private_key) : undefined, public_key: account.public_key,
      b_download: String(account.b_download), b_upload: String(account.b_upload),
    };
    checkAccountCreate(body, { ...stores, host: ctx.host, accountLimit: () => limit });
    stores.accounts.restore(account);
  });
}

/** The O(1) counters restore copies: the account count (the license check reads it) and the mark sequence. */
function checkCounters(snap: Database.Database): void {
  const counter = snap.prepare<[string], number>('SELECT value FROM wireguard_counters WHERE name = ?').pluck();
  const rows = snap.prepare<[], number>('SELECT COUNT(*) FROM accounts').pluck().get()!;
  const maxMark = snap.prepare<[], number>('SELECT COALESCE(MAX(mangle), 0) FROM accounts').pluck().get()!;
  if (counter.get('accounts') !== rows) refuse('wireguard_counters', new Error(`the account count is not the ${rows} accounts of the archive`));
  if (!((counter.get('account_seq') ?? -1) >= maxMark)) refuse('wireguard_counters', new Error('the account sequence is behind the marks in use'));
}

/** Filter rules (POST /firewall/rules/filter's checks) and the firewall settings; returns the global internal_traffic. */
function checkPolicy(snap: Database.Database): boolean {
  const rules = snap.prepare<[], Record<string, unknown>>('SELECT * FROM firewall_filter_rules ORDER BY position').all();
  for (const rule of rules) row(`filter rule '${String(rule.name)}'`, () => checkFilterRule({ ...rule, position: undefined }));
  const conf = snap.prepare<[], Record<string, number | string>>('SELECT * FROM firewall_conf WHERE id = 1').get();
  if (!conf) return true;
  return row('firewall conf', () => checkConf({
    internal_traffic: conf.internal_traffic === 1, ip_forward: conf.ip_forward === 1,
    policy_input: conf.policy_input, policy_forward: conf.policy_forward, policy_output: conf.policy_output,
  })).internal_traffic;
}

/** DNS (PUT /dns's schema), system config (PUT /system/config's) and the backup schedule (PUT /backups/config's). */
function checkSettings(snap: Database.Database): void {
  const dns = snap.prepare<[], Record<string, number | string>>('SELECT enabled, forwarders_1, forwarders_2, max_cache_ttl FROM dns_settings WHERE id = 1').get();
  if (dns) row('dns settings', () => parseInput(dnsUpdateSchema, { ...dns, enabled: String(dns.enabled), max_cache_ttl: String(dns.max_cache_ttl) }));
  const setting = (key: string): Record<string, unknown> | null => {
    const text = snap.prepare<[string], string>('SELECT value FROM settings WHERE key = ?').pluck().get(key);
    if (text === undefined) return null;
    return row(`setting ${key}`, () => {
      const value: unknown = JSON.parse(text);
      if (!value || typeof value !== 'object' || Array.isArray(value)) throw new Error('not an object');
      return value as Record<string, unknown>;
    });
  };
  const system = setting('system_config');
  if (system) row('setting system_config', () => parseInput(systemConfigUpdateSchema, system));
  const backup = setting(BACKUP_CONFIG_SETTING);
  if (backup) {
    row(`setting ${BACKUP_CONFIG_SETTING}`, () => {
      const { ftp_password_sealed: sealed, ...rest } = { ...DEFAULT_BACKUP_CONFIG, ...backup };
      const parsed = parseInput(backupConfigUpdateSchema, { ...rest, ftp_password: '' });
      const failure = checkBackupConfig(parsed, typeof sealed === 'string' && sealed !== '');
      if (failure) throw new Error(failure);
    });
  }
}

/** Every sealed value in the other tables (license, FTP password, IKEv2 keys, TSDB token, ...) opens with `box`. */
function checkSealedValues(snap: Database.Database, box: SecretBox): void {
  const tables = snap.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all();
  for (const table of tables.filter((t) => !SCANNED_ELSEWHERE.has(t))) {
    const quoted = `"${table.replace(/"/g, '""')}"`;
    for (const { name } of snap.prepare<[], { name: string }>(`PRAGMA table_info(${quoted})`).all()) {
      const column = `"${name.replace(/"/g, '""')}"`;
      const values = snap.prepare<[], string>(`SELECT ${column} FROM ${quoted} WHERE typeof(${column}) = 'text' AND instr(${column}, 'enc:v1:') > 0`).pluck();
      for (const value of values.iterate()) {
        for (const sealed of value.match(SEALED) ?? []) row(`table ${table}, column ${name}`, () => open(box, sealed));
      }
    }
  }
}
