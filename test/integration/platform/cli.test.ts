// The platform CLI: admin tokens (printed once, stored as a SHA-256 digest), serve with graceful SIGTERM, option errors.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { freePort, removeDir, spawnVpnhost, tempDir, vpnhostInProcess } from '../../fixtures/platform/processes.ts';
import { readStore } from '../../fixtures/platform/read-store.ts';

test('admin-token create prints the token alone, list shows it without the value, delete removes it', async () => {
  const dataDir = tempDir('tokens');
  try {
    const token = await vpnhostInProcess(['platform', 'admin-token', 'create', '--data', dataDir, '--comment', 'ci robot']);
    assert.match(token, /^vpa_[0-9a-f]{64}$/);
    const rows = await readStore(dataDir, (store) => store.db.selectFrom('admin_tokens').select(['id', 'digest', 'comment']).execute());
    assert.equal(rows.length, 1);
    assert.equal(rows[0].digest, createHash('sha256').update(token).digest('hex'));
    assert.equal(rows[0].comment, 'ci robot');
    const list = await vpnhostInProcess(['platform', 'admin-token', 'list', '--data', dataDir]);
    assert.match(list, new RegExp(`^${rows[0].id}\\t.*\\tci robot$`));
    assert.equal(list.includes(token), false);
    assert.equal(await vpnhostInProcess(['platform', 'admin-token', 'delete', String(rows[0].id), '--data', dataDir]), '');
    assert.equal(await vpnhostInProcess(['platform', 'admin-token', 'list', '--data', dataDir]), '');
  } finally {
    removeDir(dataDir);
  }
});

test('platform serve prints its URL, answers /healthz and exits 0 on SIGTERM', async () => {
  const dataDir = tempDir('serve');
  try {
    const port = await freePort();
    const child = await spawnVpnhost(['platform', 'serve', '--listen', `127.0.0.1:${port}`, '--data', dataDir, '--workers', '1'], /platform listening on (http:\/\/\S+)/, { VPNHOST_LOG_LEVEL: 'warn' });
    assert.equal(child.url, `http://127.0.0.1:${port}`);
    const health = await fetch(`${child.url}/healthz`);
    assert.equal(health.status, 200);
    const unauth = await fetch(`${child.url}/api/admin/services/x`);
    assert.equal(unauth.status, 401);
    await child.stop();
    const result = await child.proc;
    assert.equal(result.exitCode, 0);
    assert.match(child.output(), /SIGTERM, shutting down/);
  } finally {
    removeDir(dataDir);
  }
});

test('bad options are refused with a clear message', async () => {
  const dataDir = tempDir('bad');
  try {
    await assert.rejects(vpnhostInProcess(['platform', 'serve', '--listen', 'nonsense', '--data', dataDir]), /--listen must be HOST:PORT/);
    await assert.rejects(vpnhostInProcess(['platform', 'worker', '--queue', 'embedded', '--data', dataDir]), /worker needs --queue redis:\/\/HOST:PORT/);
  } finally {
    removeDir(dataDir);
  }
});
