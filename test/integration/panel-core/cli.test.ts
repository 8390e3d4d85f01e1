// The CLI end to end: vendor keygen/issue, access-hash create/list/delete and license install against a running
// `panel serve --driver simulated` (each command its own process, as an operator runs them), then SIGTERM shutdown.
// The usage checks run the dispatcher in this process: they test each command's options, not the binary's start.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { runCli } from '../../helpers/cli-in-process.ts';

const root = new URL('../../../', import.meta.url).pathname;
const bin = join(root, 'bin/vpnhost.js');

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const res = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

/** Resolves with the URL once the child prints `panel listening on <url>`; rejects if it exits first. */
function waitForListening(child: ChildProcess, output: { text: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output.text += chunk.toString();
      const match = /^panel listening on (http:\/\/\S+)$/m.exec(output.text);
      if (match) resolve(match[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output.text += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`panel exited early (${code}): ${output.text}`)));
  });
}

async function api(url: string, path: string, hash: string, init: RequestInit = {}) {
  const res = await fetch(`${url}/api/v1${path}`, { ...init, headers: { cookie: `access_hash=${hash}`, ...(init.headers ?? {}) } });
  return { status: res.status, body: (await res.json()) as { error: string; msg: Record<string, unknown>; status: string } };
}

describe('vpnhost CLI', { timeout: 120_000 }, () => {
  it('--help works for every command', async () => {
    for (const args of [['panel', '--help'], ['panel', 'serve', '--help'], ['panel', 'access-hash', '--help'], ['panel', 'license', '--help'], ['license', '--help']]) {
      const res = await runCli(args);
      assert.equal(res.code, 0, args.join(' '));
      assert.match(res.stdout, /usage/, args.join(' '));
    }
    assert.equal((await runCli(['panel', 'serve', '--driver', 'bogus'])).code, 1);
    assert.equal((await runCli(['panel', 'access-hash', 'create', '--ip', 'not-an-ip', '--data', join(tmpdir(), 'never-used')])).code, 2);
  });

  it('access hashes and a license installed from the CLI take effect at once in a running panel; SIGTERM stops it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-cli-'));
    const data = join(dir, 'panel');
    const vendorDir = join(dir, 'vendor');
    let child: ChildProcess | null = null;
    try {
      assert.equal(cli(['license', 'keygen', '--out', vendorDir]).code, 0);
      assert.equal(statSync(join(vendorDir, 'vendor-private.pem')).mode & 0o777, 0o600);
      const issued = cli(['license', 'issue', '--private-key', join(vendorDir, 'vendor-private.pem'), '--accounts', '25', '--expires', '2099-12-31']);
      assert.equal(issued.code, 0, issued.stderr);
      const key = issued.stdout.trim();
      assert.match(issued.stdout, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\n$/);

      const created = cli(['panel', 'access-hash', 'create', '--ip', '127.0.0.1', '--comment', 'ci', '--data', data]);
      assert.equal(created.code, 0, created.stderr);
      assert.match(created.stdout, /^[0-9a-f]{80}\n$/);
      const hash = created.stdout.trim();

      const output = { text: '' };
      child = spawn(process.execPath, [bin, 'panel', 'serve', '--driver', 'simulated', '--listen', '127.0.0.1:0', '--data', data], {
        cwd: root,
        env: { ...process.env, VPNHOST_LICENSE_PUBLIC_KEY: join(vendorDir, 'vendor-public.pem') },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
      const url = await waitForListening(child, output);

      let res = await api(url, '/system/status', hash);
      assert.equal(res.status, 200);
      assert.equal(res.body.msg.license_valid, false);
      assert.equal(res.body.msg.count_accounts_available, 50);

      // A second hash created while the panel runs works at once.
      const second = cli(['panel', 'access-hash', 'create', '--ip', '127.0.0.1', '--data', data]).stdout.trim();
      assert.equal((await api(url, '/system/config', second)).status, 200);

      // The license, installed by the CLI with the key the panel was started with, counts at once.
      const installed = cli(['panel', 'license', 'install', key, '--data', data]);
      assert.equal(installed.code, 0, installed.stderr);
      res = await api(url, '/system/status', hash);
      assert.equal(res.body.msg.license_valid, true);
      assert.equal(res.body.msg.count_accounts_available, 25);
      assert.equal((await api(url, '/license', hash)).body.msg.accounts, 25);

      const listed = cli(['panel', 'access-hash', 'list', '--json', '--data', data]);
      const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>;
      assert.deepEqual(rows.map((r) => [r.id, r.ip, r.comment]), [[1, '127.0.0.1', 'ci'], [2, '127.0.0.1', '']]);
      assert.ok(!listed.stdout.includes(hash) && !cli(['panel', 'access-hash', 'list', '--data', data]).stdout.includes(hash));

      assert.equal(cli(['panel', 'access-hash', 'delete', '1', '--data', data]).code, 0);
      res = await api(url, '/system/status', hash);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { error: 'Not authorized', msg: '', status: 'error' });
      assert.equal((await api(url, '/system/status', second)).status, 200);
      assert.equal(cli(['panel', 'access-hash', 'delete', '1', '--data', data]).code, 1, 'deleting twice fails');

      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      child = null;
      await assert.rejects(fetch(`${url}/api/v1/system/status`), 'the port is closed');
      assert.match(output.text, /"msg":"panel stopped"/);
      assert.ok(!output.text.includes(hash) && !output.text.includes(second) && !output.text.includes(key), 'no secret in the logs');
      assert.ok(!readFileSync(join(data, 'panel.db')).includes(Buffer.from(key)), 'license key sealed at rest');
    } finally {
      child?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
