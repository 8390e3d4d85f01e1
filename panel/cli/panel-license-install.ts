// `vpnhost panel license install KEY`: verifies a license key against the vendor public key and stores it sealed.
import { parseArgs } from 'node:util';
import { SecretBox } from '../../shared/secret-box.ts';
import { LicenseInstallError, LicenseService } from '../services/license.ts';
import { LICENSE_PUBLIC_KEY_SETTING, toLicensePublicKey } from '../services/license-key.ts';
import { isoWithOffset } from '../services/iso-time.ts';
import { databasePath, openDatabase } from '../store/db.ts';
import { LicenseRepository } from '../store/repositories/license.ts';
import { SettingsRepository } from '../store/repositories/settings.ts';
import { defaultDataDir, readPublicKeyFile } from './serve-options.ts';

const PANEL_LICENSE_HELP = `usage: vpnhost panel license install KEY [--data DIR] [--license-public-key FILE]

Verifies KEY (a license issued by \`vpnhost license issue\`) and installs it; a running panel uses it at once.
The vendor public key comes from --license-public-key / VPNHOST_LICENSE_PUBLIC_KEY, else from the key the panel
was last started with in DIR.
  --data DIR   data directory (VPNHOST_PANEL_DATA, default ./data/panel)
`;

/** Runs `license ...` under `vpnhost panel`; resolves to the exit code. */
export async function panelLicenseCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h') {
    process.stdout.write(PANEL_LICENSE_HELP);
    return verb ? 0 : 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: { data: { type: 'string' }, 'license-public-key': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(PANEL_LICENSE_HELP);
    return 0;
  }
  if (verb !== 'install' || positionals.length !== 1) {
    process.stderr.write(PANEL_LICENSE_HELP);
    return 2;
  }
  const dataDir = values.data ?? defaultDataDir();
  const db = openDatabase(databasePath(dataDir));
  try {
    const settings = new SettingsRepository(db);
    const pem = readPublicKeyFile(values['license-public-key'] ?? process.env.VPNHOST_LICENSE_PUBLIC_KEY) ?? settings.get<string>(LICENSE_PUBLIC_KEY_SETTING) ?? null;
    const service = new LicenseService({ repo: new LicenseRepository(db), secretBox: SecretBox.open(dataDir), publicKey: toLicensePublicKey(pem) });
    const claims = service.install(positionals[0]);
    process.stdout.write(`license installed: ${claims.accounts} accounts, expires ${isoWithOffset(new Date(claims.exp * 1000))}\n`);
    return 0;
  } catch (err) {
    if (err instanceof LicenseInstallError) {
      process.stderr.write(`license install: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    db.close();
  }
}
