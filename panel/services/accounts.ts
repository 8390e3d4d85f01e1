// Accounts (peers): CRUD with generated unique values, each change mirrored by one batched call per subsystem.
import { randomInt } from 'node:crypto';
import { generateKeyPair } from '../dataplane/keys.ts';
import { ApiError, E } from '../http/errors.ts';
import type { SecretBox } from '../../shared/secret-box.ts';
import type { Account, AccountCreateBody, AccountUpdateBody } from '../../shared/wire/account.ts';
import type { AccountRow, AccountsRepository, AccountWithServer } from '../store/repositories/accounts.ts';
import type { ListingPage } from '../schemas/listing.ts';
import type { ServerRow, ServersRepository } from '../store/repositories/servers.ts';
import { checkAccountCreate, checkAccountUpdate, type AccountInput } from './account-checks.ts';
import { AccountListing } from './account-listing.ts';
import type { JsonBody } from './listing-fragments.ts';
import { formatIpv4, peerIpv6 } from './addressing.ts';
import { dataplaneRefusal } from './refusal.ts';
import type { DataplaneSync } from './dataplane-sync.ts';
import type { HostNetworkReader, HostNetworkView } from './host-networks.ts';

/** Collaborators of the account service. */
export interface AccountServiceDeps {
  servers: ServersRepository;
  accounts: AccountsRepository;
  box: SecretBox;
  sync: DataplaneSync;
  /** The license's account limit (LicenseService.accountLimit). */
  accountLimit(): number;
  /** The host's networks (through the driver); a read younger than a second is reused. */
  hosts: HostNetworkReader;
  /**
   * Traffic statistics (optional): told before an enabled account's peer leaves (IKEv2 servers sample their SAs);
   * WireGuard needs nothing (a suspended peer is parked until the next sample, see DataplaneSync.applyAccountChange).
   */
  statistics?: { beforePeerLeaves(server: ServerRow): Promise<void> };
  /** One-time links: a disabled account's links are deleted (a deleted account's go by cascade). */
  otlLinks?: { killForAccount(accountId: number): void };
}

/** The plain password and private key of a row being written (its columns hold them sealed). */
interface OpenedSecrets {
  password: string;
  private_key: string;
}

const PASSWORD_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
const PASSWORD_LENGTH = 16;

/** Account operations behind /account. */
export class AccountService {
  /** The listings' JSON, built from per-account fragments that follow the store's change feed. */
  private readonly listing: AccountListing;

  constructor(private readonly deps: AccountServiceDeps) {
    this.listing = new AccountListing({ rows: deps.accounts.listingReads(), box: deps.box });
    deps.accounts.onRowsChanged((id) => this.listing.forget(id));
  }

  /** Every account, oldest first; `page` (limit/offset) narrows it. */
  list(page: ListingPage = {}): Account[] {
    return this.listing.list(page);
  }

  /**
   * GET /account as JSON bytes between `open` and `close` (the envelope): the array of {@link list}, copied from kept
   * per-account fragments while it is sent.
   */
  listBody(page: ListingPage = {}, open = '', close = ''): JsonBody {
    return this.listing.arrayBody(page, open, close);
  }

  /** GET /wireguard/<name>/peers as JSON bytes: the server's accounts keyed by name, in id order, narrowed by `page`. */
  peersBody(server: ServerRow, page: ListingPage = {}, open = '', close = ''): JsonBody {
    return this.listing.objectBody(server.id, page, open, close);
  }

  get(name: string): Account {
    return this.toWire(this.require(name));
  }

  /** The stored account, or `Account not found`. */
  require(name: string): AccountWithServer {
    const row = this.deps.accounts.get(name);
    if (!row) throw new ApiError(E.ACCOUNT_NOT_FOUND);
    return row;
  }

  /**
   * POST /account: ordered checks, generated name/username/password/keys/mangle, one committed insert, then one
   * batched call per subsystem (peer, mark, classes; when enabled), shared with the account changes queued with it
   * (group commit). A data-plane failure deletes the row again and fails the request.
   */
  create(body: AccountCreateBody): Promise<Account> {
    const { accounts, sync } = this.deps;
    return sync.serial(async () => {
      const { server, input } = checkAccountCreate(body, { ...this.deps, host: await this.hostView() });
      const opened: OpenedSecrets = { password: '', private_key: '' };
      const row = accounts.create((seq) => this.newRow(seq, server, input, opened));
      try {
        await sync.applyAccountChange(server, null, row);
      } catch (err) {
        accounts.delete(row.id);
        throw dataplaneRefusal(err);
      }
      return this.toWire({ ...row, wg_name: server.name }, opened);
    }, { batch: true });
  }

  /**
   * PUT /account/<name>: `disable` removes the peer from the interface and keeps the row, `enable` puts it back, a
   * new address or rate re-applies the peer; at most one call per subsystem. The old row is written back on failure.
   */
  update(name: string, body: AccountUpdateBody): Promise<Account> {
    const { servers, accounts, sync } = this.deps;
    return sync.serial(async () => {
      const before = this.require(name);
      const server = servers.getById(before.server_id)!;
      const input = checkAccountUpdate(body, before, server, { ...this.deps, host: await this.hostView() });
      const after: AccountWithServer = { ...before };
      if (input.status !== undefined) after.status = input.status;
      if (input.password !== undefined) after.password = this.deps.box.seal(input.password);
      if (input.ip !== undefined) after.ip = input.ip;
      if (input.ipv6 !== undefined) after.allowed_ips_ipv6 = input.ipv6;
      if (input.b_download !== undefined) after.b_download = input.b_download;
      if (input.b_upload !== undefined) after.b_upload = input.b_upload;
      if (before.status === 'enable' && after.status !== 'enable') await this.deps.statistics?.beforePeerLeaves(server);
      accounts.update(after);
      try {
        await sync.applyAccountChange(server, before, after);
      } catch (err) {
        accounts.update(before);
        throw dataplaneRefusal(err);
      }
      if (after.status !== 'enable') this.deps.otlLinks?.killForAccount(after.id);
      return this.toWire(after);
    }, { batch: true });
  }

  /**
   * DELETE /account/<name>: removes the row and (when enabled) the peer; the row is restored on failure. Nothing is
   * sampled first: the account's statistics go with it.
   */
  remove(name: string): Promise<void> {
    const { servers, accounts, sync } = this.deps;
    return sync.serial(async () => {
      const row = this.require(name);
      const server = servers.getById(row.server_id)!;
      const dependents = accounts.delete(row.id);
      try {
        await sync.applyAccountChange(server, row, null);
      } catch (err) {
        accounts.restore(row, dependents);
        if (dependents.forwards.length) await sync.reapplyForwards(server).catch(() => undefined);
        throw dataplaneRefusal(err);
      }
    }, { batch: true });
  }

  /** The host's networks (briefly cached), with every server interface of the panel left out. */
  private hostView(): Promise<HostNetworkView> {
    return this.deps.hosts.cached(this.deps.servers.interfaceNames());
  }

  /** The wire shape; opens this row's password and private key only (`opened`: their plain texts, known already). */
  toWire(row: AccountWithServer, opened?: OpenedSecrets): Account {
    const { box } = this.deps;
    return {
      name: row.name,
      username: row.username,
      password: opened ? opened.password : box.open(row.password),
      status: row.status,
      wg_name: row.wg_name,
      allowed_IPs: formatIpv4(row.ip),
      b_download: String(row.b_download),
      b_upload: String(row.b_upload),
      mangle: String(row.mangle),
      private_key: opened ? opened.private_key : row.private_key ? box.open(row.private_key) : '',
      public_key: row.public_key,
    };
  }

  /** The IPv6 address a new peer gets when its server has IPv6 and none was given (an empty value means none). */
  private generatedIpv6(server: ServerRow, ip: number): string | null {
    if (!server.ipv6 || !server.address_ipv6) return null;
    return peerIpv6(server.address_ipv6, ip - server.net_first, (cidr) => this.deps.accounts.ipv6InUse(cidr));
  }

  /**
   * A new row from checked input; `seq` (never reused) is the mangle mark and numbers generated names. The plain texts
   * of the sealed password and private key go to `opened` (the answer shows them without opening the row again).
   */
  private newRow(seq: number, server: ServerRow, input: AccountInput, opened: OpenedSecrets): Omit<AccountRow, 'id'> {
    const { accounts, box } = this.deps;
    const keys = input.keys ?? generateKeyPair();
    opened.password = input.password ?? randomPassword();
    opened.private_key = keys.privateKey ?? '';
    return {
      name: input.name ?? freeName(`Account_${seq}`, (v) => accounts.nameInUse(v)),
      username: input.username ?? freeName(`User_${seq}`, (v) => accounts.usernameInUse(v)),
      password: box.seal(opened.password),
      status: input.status ?? 'enable',
      server_id: server.id,
      ip: input.ip!,
      allowed_ips_ipv6: input.ipv6 !== undefined ? input.ipv6 : this.generatedIpv6(server, input.ip!),
      // Mbit/s, 0 = unlimited; absent: the server's default (PUT /wireguard/<name> b_download/b_upload).
      b_download: input.b_download ?? server.b_download,
      b_upload: input.b_upload ?? server.b_upload,
      mangle: seq,
      private_key: opened.private_key ? box.seal(opened.private_key) : '',
      public_key: keys.publicKey,
    };
  }
}

/** `base`, or `base_<k>` for the smallest k that is free (someone may have picked the generated name by hand). */
function freeName(base: string, taken: (value: string) => boolean): string {
  if (!taken(base)) return base;
  for (let k = 2; ; k++) if (!taken(`${base}_${k}`)) return `${base}_${k}`;
}

/** 16 characters from an unambiguous alphabet, uniformly drawn with the CSPRNG. */
function randomPassword(): string {
  let out = '';
  for (let i = 0; i < PASSWORD_LENGTH; i++) out += PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)];
  return out;
}
