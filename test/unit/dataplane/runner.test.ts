// Tests of ExecaRunner: stdin reachable by path (/dev/stdin), errors with the tool's stderr and no secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DataplaneError } from '../../../panel/dataplane/wireguard/driver.ts';
import { ExecaRunner, lastLine, redact } from '../../../panel/dataplane/linux/runner.ts';

const runner = new ExecaRunner();

test('input can be opened by path as /dev/stdin (as wg private-key /dev/stdin does) and read as fd 0', async () => {
  assert.equal((await runner.run('sh', ['-c', 'cat /dev/stdin'], { input: 'key-material\n' })).stdout, 'key-material\n');
  assert.equal((await runner.run('cat', [], { input: 'line one\nline two\n' })).stdout, 'line one\nline two\n');
});

test('a failure throws DataplaneError with the last stderr line, stdin content blanked', async () => {
  const secret = 'wDoFAZYIbJ5oi9s/oVGdUcqDQnHLXsxlwcp7GxUNlG0=';
  await assert.rejects(
    runner.run('sh', ['-c', 'printf "Key is not the correct length or format: %s\\n" "$(cat)" >&2; echo "Unable to modify interface: Address already in use" >&2; exit 1'], { input: secret }),
    (error: unknown) => {
      assert.ok(error instanceof DataplaneError);
      assert.equal(error.message, 'sh: Unable to modify interface: Address already in use');
      assert.ok(!(error.detail ?? '').includes(secret));
      assert.match(error.detail ?? '', /\[redacted\]/);
      return true;
    },
  );
});

test('allowFailure returns the exit code; a missing command is a DataplaneError', async () => {
  const result = await runner.run('sh', ['-c', 'echo out; echo err >&2; exit 4'], { allowFailure: true });
  assert.deepEqual(result, { stdout: 'out\n', stderr: 'err\n', exitCode: 4 });
  await assert.rejects(runner.run('vpnhost-no-such-tool', []), (error: unknown) => error instanceof DataplaneError);
});

test('lastLine skips ip -batch trailers; redact ignores short fragments', () => {
  assert.equal(lastLine('Error: any valid prefix is expected rather than "x".\nCommand failed -:1\n'), 'Error: any valid prefix is expected rather than "x".');
  assert.equal(redact('a b c secretvalue!', 'secretvalue!\n\nab\n'), 'a b c [redacted]');
});
