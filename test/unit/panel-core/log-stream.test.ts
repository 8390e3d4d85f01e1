// The panel's log destination: info lines wait for a batch, a warn line writes itself and everything before it at once.
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { BatchedLineStream, createLogger, FLUSH_INTERVAL_MS, securityEvent } from '../../../panel/logger.ts';

function withFile(fn: (fd: number, read: () => string[]) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-log-'));
  const path = join(dir, 'log');
  const fd = openSync(path, 'a');
  const read = () => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { msg: string }).msg);
  return fn(fd, read).finally(() => {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });
}

describe('BatchedLineStream', () => {
  it('holds info lines until the interval, writes a warn line with everything before it, in order', () =>
    withFile(async (fd, read) => {
      const logger = createLogger({ level: 'info', destination: new BatchedLineStream(fd, 60_000) });
      logger.info('one');
      logger.info('two');
      assert.deepEqual(read(), [], 'info lines are batched');
      securityEvent(logger, { event: 'auth_failed' }, 'refused');
      assert.deepEqual(read(), ['one', 'two', 'refused'], 'the warn line and the pending ones, synchronously');
      logger.info('three');
      logger.error('four');
      assert.deepEqual(read(), ['one', 'two', 'refused', 'three', 'four']);
    }));

  it('writes pending info lines within the flush interval and as soon as 4 KiB are pending', (t) =>
    withFile(async (fd, read) => {
      t.mock.timers.enable({ apis: ['setInterval'] }); // the stream's flush timer, advanced by hand below
      const logger = createLogger({ level: 'info', destination: new BatchedLineStream(fd) });
      logger.info('late');
      assert.deepEqual(read(), []);
      t.mock.timers.tick(FLUSH_INTERVAL_MS - 1);
      assert.deepEqual(read(), [], 'held until the interval is over');
      t.mock.timers.tick(1);
      assert.deepEqual(read(), ['late'], `written within ${FLUSH_INTERVAL_MS} ms`);
      for (let i = 0; i < 100; i++) logger.info({ pad: 'x'.repeat(50) }, `bulk-${i}`);
      assert.ok(read().length > 1, 'a full batch is written without waiting for the timer');
      logger.flush();
      assert.equal(read().length, 101);
    }));
});
