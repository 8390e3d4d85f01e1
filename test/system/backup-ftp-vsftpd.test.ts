// Backups to a real FTP server: vsftpd on loopback (own config, a temporary local user, plain FTP and explicit FTPS)
// receives each archive in ftp_path; retention removes the oldest on the server; a wrong password answers
// `FTP upload error:` and the local archive stays.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { E } from '../../panel/http/errors.ts';
import { BasicFtpUploader } from '../../panel/services/backups/ftp-upload.ts';
import { fillStore, makeBackupPanel } from '../integration/backups/backup-fixture.ts';
import { requireTools } from '../helpers/require-tools.ts';
import { selfSignedCert } from '../integration/smtp/smtp-fixture.ts';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Waits until vsftpd answers its 220 banner on `port`. */
async function waitForBanner(port: number): Promise<void> {
  const end = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = new Socket();
      sock.setTimeout(1000);
      sock.once('data', (d: Buffer) => { sock.destroy(); resolve(d.toString().startsWith('220')); });
      sock.once('error', () => resolve(false));
      sock.once('timeout', () => { sock.destroy(); resolve(false); });
      sock.connect(port, '127.0.0.1');
    });
    if (ok) return;
    if (Date.now() > end) throw new Error('vsftpd did not answer');
    await sleep(100);
  }
}

function vsftpdConfig(opts: { port: number; pasv: number; root: string; tls?: { cert: string; key: string } }): string {
  return [
    'listen=YES', 'listen_ipv6=NO', 'listen_address=127.0.0.1', `listen_port=${opts.port}`, 'background=NO',
    'anonymous_enable=NO', 'local_enable=YES', 'write_enable=YES', 'local_umask=077', `local_root=${opts.root}`,
    'chroot_local_user=YES', 'allow_writeable_chroot=YES', 'pam_service_name=vsftpd', 'check_shell=NO',
    'seccomp_sandbox=NO', 'pasv_enable=YES', `pasv_min_port=${opts.pasv}`, `pasv_max_port=${opts.pasv + 20}`,
    'pasv_address=127.0.0.1', 'xferlog_enable=NO', 'userlist_enable=NO',
    ...(opts.tls ? [
      'ssl_enable=YES', `rsa_cert_file=${opts.tls.cert}`, `rsa_private_key_file=${opts.tls.key}`, 'force_local_logins_ssl=YES',
      'force_local_data_ssl=YES', 'require_ssl_reuse=NO', 'ssl_tlsv1=YES', 'ssl_sslv2=NO', 'ssl_sslv3=NO',
    ] : []),
    '',
  ].join('\n');
}

test('FTP and FTPS upload to vsftpd: archives in ftp_path, retention on the server, wrong password keeps the local archive', async (t) => {
  if (!requireTools(t, ['vsftpd', 'useradd', 'userdel', 'chpasswd'], { root: true })) return;
  const work = mkdtempSync(join(tmpdir(), 'vpnhost-ftp-sys-'));
  const user = `vhbk${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('base64url');
  const daemons: ResultPromise[] = [];
  let userMade = false;
  try {
    chmodSync(work, 0o755); // the FTP user must reach its folder inside
    const root = join(work, 'ftp-root');
    mkdirSync(root, { mode: 0o755 });
    execFileSync('useradd', ['-M', '-d', root, '-s', '/bin/sh', user]);
    userMade = true;
    execFileSync('chpasswd', { input: `${user}:${password}\n` });
    chownSync(root, Number(execFileSync('id', ['-u', user]).toString().trim()), 0);
    const cert = join(work, 'cert.pem');
    const key = join(work, 'key.pem');
    const tls = selfSignedCert();
    writeFileSync(cert, tls.cert);
    writeFileSync(key, tls.key, { mode: 0o600 });
    const start = async (tls: boolean) => {
      const port = await freePort();
      const pasv = 40_000 + Math.floor(Math.random() * 20_000);
      const conf = join(work, `vsftpd-${tls ? 'tls' : 'plain'}.conf`);
      writeFileSync(conf, vsftpdConfig({ port, pasv, root, tls: tls ? { cert, key } : undefined }));
      daemons.push(execa('vsftpd', [conf], { reject: false, stdin: 'ignore', buffer: false }));
      await waitForBanner(port);
      return port;
    };
    const plainPort = await start(false);
    const tlsPort = await start(true);

    const p = await makeBackupPanel({ deps: { backups: { ftp: new BasicFtpUploader({ timeoutMs: 10_000, ca: readFileSync(cert, 'utf8') }) } } });
    try {
      await fillStore(p);
      const config = {
        backup_to_ftp: '1', every_day: '0', every_day_hour: '3', every_day_minute: '0', every_day_statistics: '0',
        every_hour: '0', every_hour_minute: '0', every_hour_statistics: '0', ftp_server: '127.0.0.1',
        ftp_server_port: String(plainPort), ftp_user: user, ftp_password: password, ftp_path: 'vpn/backups', number_backups: '2',
      };
      await p.ok('PUT', '/backups/config', config);
      const made: string[] = [];
      for (let i = 0; i < 3; i++) {
        p.clock.advance(60_000);
        made.push((await p.ok('POST', '/backups', { statistics: '1' })).backup_name);
      }
      const remote = join(root, 'vpn', 'backups');
      assert.deepEqual(readdirSync(remote).sort(), [made[1], made[2]], 'the oldest removed on the server');
      for (const name of [made[1], made[2]]) {
        assert.ok(readFileSync(join(remote, name)).equals(readFileSync(join(p.dir, 'backups', name))), `${name} uploaded whole`);
      }

      // explicit FTPS (AUTH TLS) to the second daemon: same folder, the newest archive arrives
      await p.ok('PUT', '/backups/config', { ...config, ftp_server: 'ftps://127.0.0.1', ftp_server_port: String(tlsPort) });
      p.clock.advance(60_000);
      const overTls = (await p.ok('POST', '/backups')).backup_name;
      assert.deepEqual(readdirSync(remote).sort(), [made[2], overTls]);

      // a wrong password: the answer names the reason, the local archive stays, nothing new on the server
      await p.ok('PUT', '/backups/config', { ...config, ftp_password: `${password}-wrong` });
      p.clock.advance(60_000);
      const failed = await p.call('POST', '/backups');
      assert.equal(failed.body.status, 'error');
      assert.ok(failed.body.error.startsWith(`${E.BACKUP_FTP_UPLOAD} `), failed.body.error);
      assert.match(failed.body.error, /530/);
      assert.equal(failed.body.error.includes(password), false);
      const local = (await p.ok('GET', '/backups')).backups.map((b: any) => b.backup_name);
      assert.equal(local.length, 2);
      assert.ok(existsSync(join(p.dir, 'backups', local[0])));
      assert.deepEqual(readdirSync(remote).sort(), [made[2], overTls]);
      // the scheduled run with the same failure reports it and keeps its archive too
      p.clock.advance(60_000);
      assert.equal(await p.app.services.backupScheduler.trigger('hourly'), 'failed');
      assert.equal((await p.ok('GET', '/backups')).backups.length, 2);
    } finally {
      await p.close();
    }
  } finally {
    for (const d of daemons) d.kill('SIGTERM');
    await Promise.all(daemons.map((d) => d.catch(() => undefined)));
    if (process.env.KEEP_FTP) console.log(work); else if (userMade) execFileSync('userdel', [user]);
    if (!process.env.KEEP_FTP) rmSync(work, { recursive: true, force: true });
  }
});
