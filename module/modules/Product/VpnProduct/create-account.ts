// Idempotent account creation: one deterministic name per service, adoption after a lost answer or a crash,
// and a retry with the next free address when another writer took the chosen one.
import type { AddressPool } from './address-pool.ts';
import { IP_IN_USE, NAME_IN_USE, PanelError, USERNAME_IN_USE, type CreateAccountParams, type PanelClient } from './panel-client.ts';
import type { Account } from './wire-schemas.ts';

/** Addresses tried per attempt before giving up with the panel's `IP address already in use`. */
const MAX_ADDRESS_TRIES = 16;

export const ACCOUNT_OWNED_BY_OTHER = (name: string) => `Account ${name} exists on the panel with another username`;

export interface CreateAccountInput {
  client: PanelClient;
  addresses: AddressPool;
  /** Key of the free-address cache: `<location>/<server>`. */
  poolKey: string;
  params: Omit<CreateAccountParams, 'allowed_IPs'> & { name: string; username: string };
  signal?: AbortSignal;
}

/**
 * POSTs the account with a free address. `The name is already in use` (or the username) means an earlier attempt
 * got through: the existing account is adopted when its username is the service's, refused otherwise. Panel errors
 * surface verbatim as PanelError.
 */
export async function createAccountIdempotent(input: CreateAccountInput): Promise<Account> {
  const { client, addresses, poolKey, params, signal } = input;
  let lastError: unknown = null;
  for (let i = 0; i < MAX_ADDRESS_TRIES; i++) {
    const ip = await addresses.take(poolKey, () => client.availableIps(params.wg_name, signal), params.wg_name);
    try {
      const account = await client.createAccount({ ...params, allowed_IPs: `${ip}/32` }, signal);
      addresses.settle(poolKey, ip);
      return account;
    } catch (err) {
      if (err instanceof PanelError && err.message === IP_IN_USE) {
        addresses.settle(poolKey, ip);
        addresses.invalidate(poolKey);
        lastError = err;
        continue;
      }
      addresses.release(poolKey, ip);
      if (err instanceof PanelError && (err.message === NAME_IN_USE || err.message === USERNAME_IN_USE)) {
        const existing = await client.findAccount(params.name, signal);
        if (existing && existing.username === params.username) return existing;
        if (existing) throw new PanelError(ACCOUNT_OWNED_BY_OTHER(params.name));
      }
      throw err;
    }
  }
  throw lastError ?? new PanelError(IP_IN_USE);
}
