// `TSDB agent not installed` also when ulogd is there but its JSON output plugin (Debian `ulogd2-json`) is not.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { hasJsonOutputPlugin } from '../../../panel/dataplane/traffic-log/linux/ulogd-source.ts';

test('the JSON output plugin is looked for in the plugin directories that exist', () => {
  const root = mkdtempSync(join(tmpdir(), 'vpnhost-ulogd-plugins-'));
  try {
    const multiarch = join(root, 'multiarch');
    const lib = join(root, 'lib');
    const missing = join(root, 'nowhere');
    mkdirSync(multiarch);
    writeFileSync(join(multiarch, 'ulogd_inppkt_NFLOG.so'), '');
    assert.equal(hasJsonOutputPlugin([multiarch, missing]), false, 'ulogd2 without ulogd2-json');
    mkdirSync(lib);
    writeFileSync(join(lib, 'ulogd_output_JSON.so'), '');
    assert.equal(hasJsonOutputPlugin([multiarch, lib, missing]), true, 'found in another existing directory');
    assert.equal(hasJsonOutputPlugin([missing]), true, 'an unknown layout is trusted (ulogd -V answered)');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
