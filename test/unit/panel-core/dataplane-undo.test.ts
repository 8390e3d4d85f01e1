// UndoLedger: a failed undo is logged, marks subsystem:interface, and only a later full reconcile clears the mark.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../../panel/logger.ts';
import { UndoLedger, type UndoStep } from '../../../panel/services/dataplane-undo.ts';

test('a failed undo is logged at error level with its subsystem and marks it; a good one leaves no mark', async () => {
  const lines: string[] = [];
  const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, cb) => (lines.push(String(chunk)), cb()) }) });
  const heard: UndoStep[] = [];
  const ledger = new UndoLedger((step) => heard.push(step), logger);
  let undone = 0;
  await ledger.run({ subsystem: 'firewall', iface: 'wg1', run: async () => void undone++ });
  assert.equal(undone, 1);
  assert.deepEqual(ledger.marked(), []);
  const failing: UndoStep = { subsystem: 'shaping', iface: 'wg2', run: () => Promise.reject(new Error('tc: boom')) };
  await ledger.run(failing);
  await ledger.run({ subsystem: 'wireguard', iface: 'wg0', run: () => Promise.reject(new Error('wg: boom')) });
  assert.deepEqual(ledger.marked(), ['shaping:wg2', 'wireguard:wg0']);
  assert.deepEqual(heard.map((s) => s.iface), ['wg2', 'wg0']);
  const logged = lines.map((l) => JSON.parse(l) as { level: number; subsystem: string; err: string });
  assert.deepEqual(logged.map((l) => [l.level, l.subsystem, l.err]), [[50, 'shaping', 'tc: boom'], [50, 'wireguard', 'wg: boom']]);
});

test('a reconcile clears the marks made before it, only when it succeeded', async () => {
  const ledger = new UndoLedger(() => undefined);
  await ledger.run({ subsystem: 'firewall', iface: 'wg1', run: () => Promise.reject(new Error('x')) });
  await assert.rejects(ledger.settle(() => Promise.reject(new Error('reconcile failed'))));
  assert.deepEqual(ledger.marked(), ['firewall:wg1']);
  const answer = await ledger.settle(async () => {
    // an undo failing while the reconcile runs stays marked
    await ledger.run({ subsystem: 'shaping', iface: 'wg3', run: () => Promise.reject(new Error('y')) });
    return 'done';
  });
  assert.equal(answer, 'done');
  assert.deepEqual(ledger.marked(), ['shaping:wg3']);
});
