// IKEv2 sessions and daemon facts: GET /ikev2/online, DELETE /ikev2/online/<name>, GET /ikev2/info.
import type { Ipsec, IpsecSa } from '../../dataplane/ipsec/ipsec.ts';
import type { IpsecWriter } from '../lane-writers.ts';
import { ApiError, E } from '../../http/errors.ts';
import type { Ikev2Info, Ikev2OnlineEntry } from '../../schemas/ikev2.ts';
import type { AccountsRepository } from '../../store/repositories/accounts.ts';
import { formatIpv4 } from '../addressing.ts';

/** Collaborators of {@link Ikev2Sessions}. */
export interface Ikev2SessionsDeps {
  /** Reads of charon (SAs, status). */
  ipsec: Pick<Ipsec, 'listSas' | 'status'>;
  /** charon's writer (SA terminations, inside the lane). */
  writer: Pick<IpsecWriter, 'terminate'>;
  accounts: AccountsRepository;
  nameByUsername(username: string): string | undefined;
  serial<T>(task: () => Promise<T> | T): Promise<T>;
  /** Runs in the lane right before SAs are terminated (the traffic statistics sample, so their last bytes count). */
  beforeTerminate?: () => Promise<void>;
}

/** `3d 2h 5m 10s` (leading zero units left out; `0s` for a fresh SA). */
export function uptimeText(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const parts: Array<[number, string]> = [[Math.floor(s / 86400), 'd'], [Math.floor((s % 86400) / 3600), 'h'], [Math.floor((s % 3600) / 60), 'm'], [s % 60, 's']];
  const first = parts.findIndex(([n]) => n > 0);
  return first < 0 ? '0s' : parts.slice(first).map(([n, u]) => `${n}${u}`).join(' ');
}

/** Live IKEv2 sessions (from the daemon's SAs, nothing cached) joined with the accounts. */
export class Ikev2Sessions {
  constructor(private readonly deps: Ikev2SessionsDeps) {}

  /** One entry per established IKE SA whose identity is an account. */
  async online(): Promise<Ikev2OnlineEntry[]> {
    const out: Ikev2OnlineEntry[] = [];
    for (const sa of await this.deps.ipsec.listSas()) {
      if (sa.state !== 'ESTABLISHED') continue;
      const entry = this.entry(sa);
      if (entry) out.push(entry);
    }
    return out;
  }

  /** Terminates every SA of the account (`Account not found` for an unknown name); idempotent. */
  async drop(name: string): Promise<void> {
    const account = this.deps.accounts.get(name);
    if (!account) throw new ApiError(E.ACCOUNT_NOT_FOUND);
    await this.deps.serial(async () => {
      await this.deps.beforeTerminate?.().catch(() => undefined);
      return this.deps.writer.terminate(account.username);
    });
  }

  /** GET /ikev2/info: charon's pid (`pid_starter` is `''`: no starter/ipsec.conf stack, swanctl drives charon). */
  async info(): Promise<Ikev2Info> {
    const status = await this.deps.ipsec.status();
    return { pid_charon: status.pid ? String(status.pid) : '', pid_starter: '', ipsec: status.version };
  }

  private entry(sa: IpsecSa): Ikev2OnlineEntry | null {
    const name = this.deps.nameByUsername(sa.username);
    const account = name ? this.deps.accounts.get(name) : undefined;
    if (!account) return null;
    return {
      name: account.name, username: account.username, wg_name: account.wg_name, allowed_IPs: formatIpv4(account.ip),
      b_download: String(account.b_download), b_upload: String(account.b_upload), status: account.status,
      endpoint: sa.remoteHost, uptime: uptimeText(sa.establishedSeconds),
    };
  }
}
