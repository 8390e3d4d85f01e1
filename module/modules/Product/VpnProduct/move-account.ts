// change_package to another location or server: the account moves. To another panel: create on the new panel first
// (adopted on a retry), then delete on the old one (gone counts as deleted). On the same panel (another server; the
// panel refuses a second account of one username): delete, then create. Each step is idempotent, so the queue's retries
// finish a move a crash interrupted.
import type { AddressPool } from './address-pool.ts';
import { createAccountIdempotent } from './create-account.ts';
import { ACCOUNT_NOT_FOUND, PanelError, type PanelClient } from './panel-client.ts';
import { panelOf, type MoveTarget, type VpnProvisionData } from './provision.ts';
import type { Account } from './wire-schemas.ts';

export interface MoveInput {
  /** Client of a panel by name. */
  client(panel: string): Promise<PanelClient>;
  addresses: AddressPool;
  current: VpnProvisionData;
  target: MoveTarget;
  account: { name: string; username: string; password: string; status: 'enable' | 'disable'; bandwidth: number };
  signal?: AbortSignal;
}

/** Deletes `name` on `client`; an account the panel no longer has counts as deleted. */
export async function deleteAccountIfPresent(client: PanelClient, name: string, signal?: AbortSignal): Promise<void> {
  try {
    await client.deleteAccount(name, signal);
  } catch (err) {
    if (!(err instanceof PanelError && err.message === ACCOUNT_NOT_FOUND)) throw err;
  }
}

/** Moves the account to `target`; answers the provision data of the account at its new place. */
export async function moveAccount(input: MoveInput): Promise<VpnProvisionData> {
  const { current, target, account, signal } = input;
  const oldPanel = panelOf(current);
  const oldClient = await input.client(oldPanel);
  const newClient = target.panel === oldPanel ? oldClient : await input.client(target.panel);
  const create = (): Promise<Account> =>
    createAccountIdempotent({
      client: newClient,
      addresses: input.addresses,
      poolKey: `${target.panel}/${target.wg_server}`,
      signal,
      params: {
        wg_name: target.wg_server, name: account.name, username: account.username, password: account.password,
        status: account.status, b_download: account.bandwidth, b_upload: account.bandwidth,
      },
    });
  let created: Account;
  if (target.panel === oldPanel) {
    const existing = await oldClient.findAccount(current.account_name, signal);
    if (existing && existing.wg_name !== target.wg_server) await deleteAccountIfPresent(oldClient, current.account_name, signal);
    created = await create();
  } else {
    created = await create();
    await deleteAccountIfPresent(oldClient, current.account_name, signal);
  }
  return { account_name: created.name, wg_server: created.wg_name, address: created.allowed_IPs, panel_location: target.location, panel: target.panel };
}
