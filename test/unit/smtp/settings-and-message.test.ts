// Smtp channel settings and message rules: the 422 error bags, defaults, body derivation and failure classification.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkSmtpMessage, htmlToText, mailBodies, MAX_ATTACHMENT_BYTES } from '../../../module/modules/Notification/Smtp/message.ts';
import { isConfigured, parseSmtpSettings, SmtpSettingsError } from '../../../module/modules/Notification/Smtp/settings.ts';
import { toSmtpFailure } from '../../../module/modules/Notification/Smtp/transport.ts';

test('settings: server is another name of host, encryption any case, empty credentials dropped, port from a form string', () => {
  const parsed = parseSmtpSettings({ server: 'smtp.example.com', port: ' 587 ', encryption: 'STARTTLS', username: '', password: '', sender: 'Support <help@example.com>' });
  assert.deepEqual(parsed, { success: true, data: { host: 'smtp.example.com', port: 587, encryption: 'starttls', sender: 'Support <help@example.com>' } });
  assert.equal(isConfigured(parsed.success ? parsed.data : {}), true);
  assert.equal(isConfigured({}), false);
});

test('settings: each bad field is named in the bag', () => {
  assert.deepEqual(parseSmtpSettings({}), {
    success: false,
    errors: {
      host: ['The host field is required.'], port: ['The port field is required.'],
      encryption: ['The encryption field is required.'], sender: ['The sender field is required.'],
    },
  });
  const bad = parseSmtpSettings({ host: 'a b', port: 0, encryption: 'ssl', sender: 'x@', password: 'p', ca: 'not pem' });
  assert.deepEqual(bad.success ? null : bad.errors, {
    host: ['The host field format is invalid.'], port: ['The port field must be at least 1.'], encryption: ['The selected encryption is invalid.'],
    sender: ['The sender field must be a valid email address.'], ca: ['The ca field must be a PEM certificate.'],
  });
  const noUser = parseSmtpSettings({ host: 'smtp.example.com', port: 465, encryption: 'tls', sender: 'a@example.com', password: 'Pass-1234' });
  assert.deepEqual(noUser.success ? null : noUser.errors, { username: ['The username field is required when password is present.'] });
  const error = new SmtpSettingsError({ port: ['The port field must be an integer.'] });
  assert.equal(error.statusCode, 422);
  assert.equal(error.message, 'invalid module_data: port: The port field must be an integer.');
});

test('message: the spec rules (to, subject ≤ 255, message) and each attachment checked', () => {
  assert.equal(checkSmtpMessage({ to: ' a@b.example ', subject: 's'.repeat(255), message: 'm' }).success, true);
  const bag = (data: Record<string, unknown>) => { const r = checkSmtpMessage(data); return r.success ? null : r.errors; };
  assert.deepEqual(bag({ to: 'a@b.example', subject: 'x', message: 'm', attachments: [{ filename: 'a/b', content: 1, encoding: 'hex' }] }), {
    'attachments.0.filename': ['The filename field must not contain slashes or line breaks.'],
    'attachments.0.content': ['The content field must be a string.'],
    'attachments.0.encoding': ['The selected encoding is invalid.'],
  });
  const big = 'a'.repeat(MAX_ATTACHMENT_BYTES + 1);
  assert.deepEqual(bag({ to: 'a@b.example', subject: 'x', message: 'm', attachments: [{ filename: 'big.txt', content: big }] }), {
    attachments: [`The attachments field must not be greater than ${MAX_ATTACHMENT_BYTES / 1024} kilobytes.`],
  });
  assert.deepEqual(bag({ to: 'a@b.example', subject: 7, message: 'm', html: 3 }), {
    subject: ['The subject field must be a string.'], html: ['The html field must be a string.'],
  });
});

test('bodies: an HTML message gets a text part, a text message an escaped HTML part; attachments base64', () => {
  const html = mailBodies({ to: 'a@b.example', subject: 's', message: '<p>Hi &amp; welcome</p><ul><li>one</li></ul>' });
  assert.equal(html.text, 'Hi & welcome\n- one');
  assert.equal(html.html, '<p>Hi &amp; welcome</p><ul><li>one</li></ul>');
  const text = mailBodies({ to: 'a@b.example', subject: 's', message: 'a < b & "c"', attachments: [{ filename: 'x.txt', content: 'hé' }] });
  assert.equal(text.text, 'a < b & "c"');
  assert.equal(text.html, '<div style="white-space:pre-wrap">a &lt; b &amp; &quot;c&quot;</div>');
  assert.deepEqual(text.attachments, [{ filename: 'x.txt', content_base64: Buffer.from('hé').toString('base64') }]);
  const both = mailBodies({ to: 'a@b.example', subject: 's', message: 'plain', html: '<b>rich</b>' });
  assert.deepEqual([both.text, both.html], ['plain', '<b>rich</b>']);
  assert.equal(htmlToText('a<br>b<br/>c'), 'a\nb\nc');
});

test('failures: a 4xx reply and no reply are transient, a 5xx permanent; the reply text is the message', () => {
  const busy = toSmtpFailure(Object.assign(new Error('x'), { responseCode: 451, response: '451 4.3.0 busy', command: 'RCPT TO' }));
  assert.deepEqual([busy.code, busy.transient, busy.message], [451, true, '451 4.3.0 busy (reply to RCPT TO)']);
  const denied = toSmtpFailure(Object.assign(new Error('x'), { responseCode: 550, response: '550 5.1.1 no such user' }));
  assert.deepEqual([denied.code, denied.transient, denied.message], [550, false, '550 5.1.1 no such user']);
  const refused = toSmtpFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ESOCKET' }));
  assert.deepEqual([refused.code, refused.transient, refused.message], [null, true, 'ESOCKET: connect ECONNREFUSED 127.0.0.1:1']);
});
