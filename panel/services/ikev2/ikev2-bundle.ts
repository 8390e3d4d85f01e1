// Builds the IKEv2 services (sync, PKI/settings, sessions, profiles) over one IPsec seam and the store.
import { type Clock } from '../../../shared/clock.ts';
import type { Logger } from 'pino';
import type { Ipsec } from '../../dataplane/ipsec/ipsec.ts';
import type { IpsecWriter } from '../lane-writers.ts';
import { ApiError, E } from '../../http/errors.ts';
import type { SecretBox } from '../../../shared/secret-box.ts';
import type { Db } from '../../store/db.ts';
import type { AccountsRepository } from '../../store/repositories/accounts.ts';
import { accountNameByUsername, Ikev2Repository } from '../../store/repositories/ikev2.ts';
import type { ServerRow, ServersRepository } from '../../store/repositories/servers.ts';
import { Ikev2Profiles } from './ikev2-profiles.ts';
import { Ikev2Service } from './ikev2-service.ts';
import { Ikev2Sessions } from './ikev2-sessions.ts';
import { Ikev2Sync } from './ikev2-sync.ts';

/** The IKEv2 part of the panel's services. */
export interface Ikev2Services {
  repo: Ikev2Repository;
  sync: Ikev2Sync;
  service: Ikev2Service;
  sessions: Ikev2Sessions;
  profiles: Ikev2Profiles;
}

/** What {@link buildIkev2} needs. */
export interface Ikev2BuildDeps {
  db: Db;
  /** Reads of charon (SAs, status). */
  ipsec: Pick<Ipsec, 'listSas' | 'status'>;
  /** charon's writer (`DataplaneSync.writers.ipsec`): the only way the IKEv2 services change the daemon. */
  ipsecWriter: IpsecWriter;
  servers: ServersRepository;
  accounts: AccountsRepository;
  box: SecretBox;
  clock: Clock;
  serial<T>(task: () => Promise<T> | T): Promise<T>;
  /** The panel resolver's addresses for a server (DnsService.serverDns): handed out by the pools when DNS is on. */
  serverDns?: (server: ServerRow) => string[] | null;
  /** Runs in the data-plane lane before DELETE /ikev2/online or an account's new password/address ends SAs (the traffic statistics take a sample). */
  beforeSasEnd?: () => Promise<void>;
  logger?: Logger;
}

export function buildIkev2(deps: Ikev2BuildDeps): Ikev2Services {
  const repo = new Ikev2Repository(deps.db);
  const sync = new Ikev2Sync({
    ipsec: deps.ipsecWriter, repo, servers: deps.servers, accounts: deps.accounts, box: deps.box, serverDns: deps.serverDns, beforeTerminate: deps.beforeSasEnd, logger: deps.logger,
  });
  const service = new Ikev2Service({ repo, box: deps.box, sync, clock: deps.clock, serial: deps.serial });
  const sessions = new Ikev2Sessions({
    ipsec: deps.ipsec, writer: deps.ipsecWriter, accounts: deps.accounts, nameByUsername: accountNameByUsername(deps.db), serial: deps.serial,
    beforeTerminate: deps.beforeSasEnd,
  });
  const profiles = new Ikev2Profiles({
    repo, box: deps.box,
    account: (name) => {
      const row = deps.accounts.get(name);
      if (!row) throw new ApiError(E.ACCOUNT_NOT_FOUND);
      return row;
    },
    server: (id) => deps.servers.getById(id)!,
  });
  return { repo, sync, service, sessions, profiles };
}
