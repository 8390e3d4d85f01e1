// ExecaRunner.spawn: the one door for daemons (argv array; exit code or signal; why a start failed; stderr piped).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExecaRunner } from '../../../panel/dataplane/linux/runner.ts';

test('a spawned command reports its pid, its stderr when piped, and its exit code', async () => {
  const child = new ExecaRunner().spawn(process.execPath, ['-e', "process.stderr.write('boom'); process.exit(3)"], { output: 'pipe' });
  assert.ok(typeof child.pid === 'number' && child.pid > 0);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  assert.deepEqual(await child.exited, { code: 3, signal: null, startError: null });
  assert.equal(stderr, 'boom');
});

test('a killed daemon reports the signal; a missing command reports why it could not start', async () => {
  const runner = new ExecaRunner();
  const child = runner.spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000); process.stdout.write("up\\n")'], { output: 'ignore' });
  child.kill('SIGTERM');
  const ended = await child.exited;
  assert.equal(ended.signal, 'SIGTERM');
  assert.equal(ended.startError, null);
  const missing = await runner.spawn('vpnhost-no-such-command', []).exited;
  assert.ok(missing.startError, JSON.stringify(missing));
  assert.equal(missing.code, null);
});
