// `vpnhost panel serve`: the GET /metrics token comes from a file (flag or env), the per-peer flag is off by default.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseServeOptions } from '../../../panel/cli/serve-options.ts';

test('metrics token file and per-peer flag', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-metrics-opts-'));
  try {
    const file = join(dir, 'token');
    writeFileSync(file, 'abcdefghijklmnop0123\nignored\n');
    const opts = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
      const parsed = parseServeOptions(argv, env);
      assert.equal(parsed.help, false);
      return (parsed as Extract<typeof parsed, { help: false }>).options;
    };
    assert.equal(opts([]).metricsToken, null);
    assert.equal(opts([]).metricsPerPeer, false);
    assert.equal(opts(['--metrics-token-file', file]).metricsToken, 'abcdefghijklmnop0123');
    assert.equal(opts([], { VPNHOST_PANEL_METRICS_TOKEN_FILE: file }).metricsToken, 'abcdefghijklmnop0123');
    assert.equal(opts(['--metrics-per-peer']).metricsPerPeer, true);
    assert.equal(opts([], { VPNHOST_PANEL_METRICS_PER_PEER: '1' }).metricsPerPeer, true);
    writeFileSync(file, 'short\n');
    assert.throws(() => opts(['--metrics-token-file', file]), /at least 16/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
