// Benches: N accounts written straight through the repository (one transaction), for scales the API would take minutes to fill.
import { generateKeyPair } from '../../panel/dataplane/keys.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { AccountsRepository } from '../../panel/store/repositories/accounts.ts';
import type { TestPanel } from '../integration/wireguard/panel-fixture.ts';

/**
 * Inserts `Account_<i>` / `User_<i>` / `password-<i>` (i = 1..n) on the server `serverName`, addresses from the
 * server's network base + 1 + i (`firstOctets` = its first two octets), a distinct public key each, the given limits.
 * `keyPairs`: a real key pair each, the private key sealed (as the API stores a generated one) instead of a public key
 * alone.
 */
export function fillAccounts(
  p: TestPanel,
  serverName: string,
  n: number,
  opts: { firstOctets: [number, number]; keyByte: number; limitMbit?: number; keyPairs?: boolean },
): void {
  const repo = new AccountsRepository(p.db);
  const box = SecretBox.open(p.dir);
  const serverId = (p.db.prepare('SELECT id FROM wireguard_servers WHERE name = ?').get(serverName) as { id: number }).id;
  const base = ((opts.firstOctets[0] << 24) | (opts.firstOctets[1] << 16)) >>> 0;
  const limit = opts.limitMbit ?? 0;
  p.db.transaction(() => {
    for (let i = 1; i <= n; i++) {
      const key = Buffer.alloc(32, opts.keyByte);
      key.writeUInt32BE(i, 0);
      const pair = opts.keyPairs ? generateKeyPair() : { privateKey: '', publicKey: key.toString('base64') };
      repo.insert({
        name: `Account_${i}`, username: `User_${i}`, password: box.seal(`password-${i}`), status: 'enable', server_id: serverId,
        ip: base + 1 + i, allowed_ips_ipv6: null, b_download: limit, b_upload: limit, mangle: 1000 + i,
        private_key: pair.privateKey ? box.seal(pair.privateKey) : '', public_key: pair.publicKey,
      });
    }
  })();
}
