// Regenerating a service's keys: the panel's PUT cannot change keys, so the account is re-created under the same name,
// address, username and limits with a key pair the panel generates; the old public key is recorded first, so a retried
// job tells a finished re-creation (another key) from one still to do, and the old configuration stops working.
import type { AddressPool } from './address-pool.ts';
import { createAccountIdempotent } from './create-account.ts';
import { deleteAccountIfPresent } from './move-account.ts';
import { IP_IN_USE, NAME_IN_USE, PanelError, type PanelClient } from './panel-client.ts';
import type { VpnProvisionData } from './provision.ts';
import type { Account } from './wire-schemas.ts';

export interface RekeyInput {
  client: PanelClient;
  addresses: AddressPool;
  /** Name of the panel (free-address cache key). */
  panel: string;
  provision: VpnProvisionData;
  /** Public key of the account before the regeneration (recorded before anything changed). */
  oldPublicKey: string;
  account: { username: string; password: string; status: 'enable' | 'disable'; bandwidth: number };
  signal?: AbortSignal;
}

/** `10.0.0.2` → `10.0.0.2/32`; a CIDR is kept. */
function asCidr(address: string): string {
  return address.includes('/') ? address : `${address}/32`;
}

/** Re-creates the account with a new key pair (same address when still free); answers the new account. */
export async function regenerateAccountKeys(input: RekeyInput): Promise<Account> {
  const { client, provision, oldPublicKey, account, signal } = input;
  const existing = await client.findAccount(provision.account_name, signal);
  if (existing && existing.public_key !== oldPublicKey) return existing;
  if (existing) await deleteAccountIfPresent(client, provision.account_name, signal);
  const params = {
    wg_name: provision.wg_server, name: provision.account_name, username: account.username, password: account.password,
    status: account.status, b_download: account.bandwidth, b_upload: account.bandwidth,
  };
  try {
    return await client.createAccount({ ...params, allowed_IPs: asCidr(provision.address) }, signal);
  } catch (err) {
    if (err instanceof PanelError && err.message === NAME_IN_USE) {
      const found = await client.findAccount(provision.account_name, signal);
      if (found && found.public_key !== oldPublicKey) return found;
    }
    if (!(err instanceof PanelError && err.message === IP_IN_USE)) throw err;
  }
  return createAccountIdempotent({ client, addresses: input.addresses, poolKey: `${input.panel}/${provision.wg_server}`, params, signal });
}
