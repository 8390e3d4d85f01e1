// Notification modules: send() validates the message (422 error bag) before the channel delivers it.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { Notification } from '../../../module/contract/notification.ts';
import type { NotificationMessage } from '../../../module/contract/validation.ts';
import { makePlatform, type TestPlatform } from './helpers/context.ts';

class Outbox extends Notification {
  sent: NotificationMessage[] = [];
  failWith: string | null = null;
  protected async deliver(message: NotificationMessage): Promise<void> {
    if (this.failWith) throw new Error(this.failWith);
    this.sent.push(message);
  }
}

let p: TestPlatform;
let outbox: Outbox;
beforeEach(() => {
  p = makePlatform();
  outbox = new Outbox(p.ctx);
  outbox.getModuleData({ server: ' smtp.example.com ', port: 587, encryption: 'tls', username: 'mailer', password: 'Smtp-Pass-4242', sender: 'noreply@example.com' });
});
afterEach(() => p.cleanup());

const valid = { to: ' user@example.com ', subject: 's'.repeat(255), message: '<p>Your VPN is ready</p>' };

test('a valid message is delivered as is (HTML body kept) and answers success', async () => {
  assert.deepEqual(await outbox.send({ ...valid, attachments: [{ filename: 'wg0.conf' }] }), { status: 'success' });
  assert.deepEqual(outbox.sent, [{ to: 'user@example.com', subject: valid.subject, message: valid.message, attachments: [{ filename: 'wg0.conf' }] }]);
  assert.equal(outbox.module_data.server, 'smtp.example.com');
});

test('validation failures answer the 422 error bag and deliver nothing', async () => {
  const result = await outbox.send({ to: 'nobody', subject: 's'.repeat(256) });
  const bag = {
    to: ['The to field must be a valid email address.'],
    subject: ['The subject field must not be greater than 255 characters.'],
    message: ['The message field is required.'],
  };
  assert.deepEqual(result, { status: 'error', message: bag, errors: bag, code: 422 });
  assert.deepEqual(await outbox.send(), {
    status: 'error',
    message: { to: ['The to field is required.'], subject: ['The subject field is required.'], message: ['The message field is required.'] },
    errors: { to: ['The to field is required.'], subject: ['The subject field is required.'], message: ['The message field is required.'] },
    code: 422,
  });
  assert.deepEqual(outbox.sent, []);
});

test('a delivery failure answers status error with the reason, the channel password cut out', async () => {
  outbox.failWith = 'AUTH failed for mailer / Smtp-Pass-4242';
  assert.deepEqual(await outbox.send(valid), { status: 'error', message: 'AUTH failed for mailer / [redacted]' });
  assert.ok(!JSON.stringify(p.db.prepare('SELECT * FROM module_logs').all()).includes('Smtp-Pass-4242'));
});
