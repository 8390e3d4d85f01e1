// `vpnhost license keygen|issue`: vendor tools to make the Ed25519 key pair and sign license keys.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { issueLicenseKey } from '../services/license-key.ts';

export const LICENSE_HELP = `usage:
  vpnhost license keygen --out DIR [--force]
      writes DIR/vendor-private.pem (0600) and DIR/vendor-public.pem (Ed25519)
  vpnhost license issue --private-key FILE --accounts N --expires YYYY-MM-DD [--subject TEXT]
      prints the license key alone; it is valid through the end of the given day (UTC)
`;

/** `YYYY-MM-DD` → 23:59:59 UTC of that day; null when not a real date. */
export function endOfDayUtc(text: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [y, m, d] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(y, m - 1, d, 23, 59, 59));
  return date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d ? date : null;
}

/** Runs `vpnhost license <verb>`; resolves to the exit code. */
export async function licenseCommand(argv: string[]): Promise<number> {
  const [verb, ...rest] = argv;
  if (!verb || verb === '--help' || verb === '-h') {
    process.stdout.write(LICENSE_HELP);
    return verb ? 0 : 2;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      out: { type: 'string' },
      force: { type: 'boolean' },
      'private-key': { type: 'string' },
      accounts: { type: 'string' },
      expires: { type: 'string' },
      subject: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(LICENSE_HELP);
    return 0;
  }
  if (verb === 'keygen') {
    if (!values.out) return usageError('keygen needs --out DIR');
    const privatePath = join(values.out, 'vendor-private.pem');
    const publicPath = join(values.out, 'vendor-public.pem');
    if (!values.force && (existsSync(privatePath) || existsSync(publicPath))) return usageError(`${values.out} already holds a vendor key (use --force to replace it)`, 1);
    mkdirSync(values.out, { recursive: true });
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    writeFileSync(privatePath, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(publicPath, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644 });
    process.stderr.write(`wrote ${privatePath} and ${publicPath}\n`);
    return 0;
  }
  if (verb === 'issue') {
    if (!values['private-key']) return usageError('issue needs --private-key FILE');
    const accounts = Number(values.accounts);
    if (!values.accounts || !/^\d+$/.test(values.accounts) || !Number.isSafeInteger(accounts) || accounts < 1) return usageError('--accounts must be a positive integer');
    const expires = values.expires ? endOfDayUtc(values.expires) : null;
    if (!expires) return usageError('--expires must be a date YYYY-MM-DD');
    if (expires.getTime() <= Date.now()) process.stderr.write('warning: this license is already expired\n');
    const privateKey = createPrivateKey(readFileSync(values['private-key'], 'utf8'));
    if (privateKey.asymmetricKeyType !== 'ed25519') return usageError('--private-key must be an Ed25519 key (vpnhost license keygen)', 1);
    process.stdout.write(`${await issueLicenseKey(privateKey, { accounts, expires, subject: values.subject })}\n`);
    return 0;
  }
  return usageError(`unknown verb '${verb}'`);
}

function usageError(message: string, code = 2): number {
  process.stderr.write(`vpnhost license: ${message}\n${code === 2 ? `\n${LICENSE_HELP}` : ''}`);
  return code;
}
