// RemoteSmtpLedger over a scripted ModuleWorkerCall: the paths and bodies it posts, answers checked by the schemas, and
// the idempotent marks tried again after a lost connection or a 5xx (never after a 4xx); the other steps never twice.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RemoteSmtpLedger } from '../../../module/modules/Notification/Smtp/remote-ledger.ts';
import type { ModuleWorkerCall } from '../../../module/platform/extension.ts';
import { WorkerApiError } from '../../../module/platform/worker-api/client.ts';

function scripted(answers: Array<unknown | Error>): ModuleWorkerCall & { calls: Array<[string, unknown]> } {
  const calls: Array<[string, unknown]> = [];
  return {
    calls,
    get: async () => null,
    post: async (path, body) => {
      calls.push([path, body]);
      const next = answers.shift();
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

test('marks are posted again after a lost connection or a 5xx, not after a 4xx', async () => {
  const call = scripted([new WorkerApiError(0, 'unreachable'), new WorkerApiError(503, 'busy'), { send_uuid: 's-1', status: 'sent' }]);
  await new RemoteSmtpLedger(call, 1).markSent('s-1', '250 OK');
  assert.deepEqual(call.calls, Array(3).fill(['/sends/s-1/sent', { reply: '250 OK' }]));

  const refused = scripted([new WorkerApiError(404, 'unknown send s-2'), { send_uuid: 's-2', status: 'failed' }]);
  await assert.rejects(new RemoteSmtpLedger(refused, 1).markFailure('s-2', '550', true), /unknown send s-2/);
  assert.equal(refused.calls.length, 1);

  const down = scripted([new WorkerApiError(0, 'a'), new WorkerApiError(0, 'b'), new WorkerApiError(0, 'c'), { send_uuid: 's-3', status: 'sent' }]);
  await assert.rejects(new RemoteSmtpLedger(down, 1).markFailure('s-3', '451', false), /c/);
  assert.equal(down.calls.length, 3, 'three tries at most');
});

test('beginDelivery and queue are posted once and their answers checked', async () => {
  const lost = scripted([new WorkerApiError(0, 'unreachable')]);
  await assert.rejects(new RemoteSmtpLedger(lost, 1).beginDelivery('s/1'), /unreachable/);
  assert.deepEqual(lost.calls, [['/sends/s%2F1/attempts', {}]]);

  const odd = scripted([{ state: 'open', attempt: 0 }]);
  await assert.rejects(new RemoteSmtpLedger(odd, 1).beginDelivery('s-1'));

  const queued = scripted([{ send_uuid: 's-9', task_id: '17' }]);
  const input = { channel_uuid: 'c-1', recipient: 'a@b.example', subject: 'S', origin: {}, status: 'logged' } as const;
  assert.deepEqual(await new RemoteSmtpLedger(queued, 1).queue(input), { send_uuid: 's-9', task_id: '17' });
  assert.deepEqual(queued.calls, [['/sends', input]]);

  const plan = scripted([{ plan: 'skipped', reason: 'no customer' }]);
  assert.deepEqual(await new RemoteSmtpLedger(plan, 1).messagePlan('invoice.created', { a: 1 }, 'k'), { plan: 'skipped', reason: 'no customer' });
  assert.deepEqual(plan.calls, [['/messages/plan', { event: 'invoice.created', payload: { a: 1 }, event_key: 'k', with_link: true }]]);
});
