// UlogdDaemon (under DaemonSupervisor) with a stand-in `ulogd` (python3, first in PATH) that reads the rendered config like
// ulogd does: it connects to the panel's socket, sends one JSON line, and the first time dies with a log line.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isProcessOf } from '../../../panel/dataplane/linux/daemon-supervisor.ts';
import { UlogdDaemon } from '../../../panel/dataplane/traffic-log/linux/ulogd-daemon.ts';
import { until } from '../../fixtures/platform/http.ts';

const isUlogdWith = (pid: number, confPath: string) => isProcessOf(pid, { cmd: 'ulogd', marker: { arg: confPath } });

const FAKE_ULOGD = `#!/usr/bin/env python3
import os, re, socket, sys, time
conf = sys.argv[sys.argv.index('-c') + 1]
text = open(conf).read()
path = re.search(r'^file="(.*)"$', text, re.M).group(1)
log = re.search(r'^logfile="(.*)"$', text, re.M).group(1)
open(sys.argv[sys.argv.index('-p') + 1], 'w').write(str(os.getpid()))
runs = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'runs')
n = int(open(runs).read()) if os.path.exists(runs) else 0
open(runs, 'w').write(str(n + 1))
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(('{"oob.prefix": "new", "run": %d}\\n' % n).encode())
if n == 0:
    open(log, 'a').write("Mon Nov 23 15:56:02 2026 <7> ulogd.c:945 error starting \`json1'\\n")
    sys.exit(1)
while True:
    time.sleep(1)
`;

describe('UlogdDaemon', () => {
  it('listens first, delivers lines, restarts a ulogd that died (reporting its log line), stops it and a stale one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vpnhost-ulogd-'));
    const bin = join(dir, 'bin');
    const path = process.env.PATH;
    const daemons: UlogdDaemon[] = [];
    try {
      mkdirSync(bin);
      writeFileSync(join(bin, 'ulogd'), FAKE_ULOGD);
      chmodSync(join(bin, 'ulogd'), 0o755);
      process.env.PATH = `${bin}:${path ?? '/usr/bin:/bin'}`;
      const lines: string[] = [];
      const errors: string[] = [];
      const daemon = new UlogdDaemon({ dir: join(dir, 'ulogd'), group: 9, threshold: 4, minRestartMs: 100 });
      daemons.push(daemon);
      // the second line comes from the restarted ulogd: wait for it, however long a loaded machine takes (the test's
      // timeout bounds the wait)
      let bothLines!: () => void;
      const secondLine = new Promise<void>((resolve) => (bothLines = resolve));
      await daemon.start((l) => {
        lines.push(l);
        if (lines.length >= 2) bothLines();
      }, (e) => errors.push(e.message));
      await secondLine;
      assert.deepEqual(lines, ['{"oob.prefix": "new", "run": 0}', '{"oob.prefix": "new", "run": 1}']);
      assert.deepEqual(errors, ['ulogd: error starting `json1\'']);
      const state = daemon.state();
      assert.equal(state.restarts, 1);
      assert.equal(state.lastError, 'ulogd: error starting `json1\'');
      assert.ok(state.pid && isUlogdWith(state.pid, daemon.confPath), 'the restarted ulogd runs with our config');
      assert.match(readFileSync(daemon.confPath, 'utf8'), /^group=9$/m);

      // A second daemon on the same directory (a panel restarted after kill -9) stops the one left behind.
      const stale = state.pid;
      const next = new UlogdDaemon({ dir: join(dir, 'ulogd'), group: 9, threshold: 4, minRestartMs: 100 });
      daemons.push(next);
      await next.start(() => undefined, () => undefined);
      // a stopped process leaves the table at its own pace: look until it is gone (bounded: a stale ulogd that is
      // never stopped fails here)
      await until(async () => (isUlogdWith(stale, daemon.confPath) ? undefined : true), 20_000, 50)
        .catch((err: Error) => assert.fail(`the stale ulogd (pid ${stale}) was not stopped: ${err.message}`));
      const pid = next.state().pid!;
      await next.stop();
      assert.equal(next.state().pid, null);
      assert.equal(isUlogdWith(pid, next.confPath), false, 'stop ended ulogd');
      assert.equal(existsSync(next.socketPath), false, 'the socket is gone');
    } finally {
      process.env.PATH = path;
      for (const d of daemons) await d.stop().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
