// The error catalogue against the spec's Errors section (byte for byte), status mapping, envelope and mapError.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fail, ok } from '../../../panel/http/envelope.ts';
import { mapError } from '../../../panel/http/error-handler.ts';
import { FirewallError } from '../../../panel/dataplane/firewall/firewall.ts';
import { SHAPING_TEXTS, ShapingError } from '../../../panel/dataplane/shaping/shaping.ts';
import { ApiError, CHARONDEBUG_SUBSYSTEMS, E, FIREWALL_TEXTS, OWN, REFUSAL_STATUS, charondebugError, statusForText } from '../../../panel/http/errors.ts';
import { dataplaneRefusal } from '../../../panel/services/refusal.ts';

function specTexts(): string[] {
  const text = readFileSync(new URL('../../fixtures/panel-core/spec-errors.md', import.meta.url), 'utf8');
  const out: string[] = [];
  for (const line of text.split('\n').filter((l) => l.startsWith('- '))) {
    for (const match of line.matchAll(/`([^`]+)`/g)) {
      const item = match[1];
      if (item.startsWith('/')) continue; // a path in the bullet's heading
      if (item.includes('<xxx>')) out.push(...CHARONDEBUG_SUBSYSTEMS.map((s) => item.replace('<xxx>', s)));
      else out.push(item);
    }
  }
  return out;
}

describe('error catalogue', () => {
  it('holds every seed text of the spec byte for byte, and nothing the spec does not name', () => {
    const spec = new Set(specTexts());
    const catalogue = new Set<string>([...Object.values(E), ...CHARONDEBUG_SUBSYSTEMS.map(charondebugError)]);
    assert.ok(spec.size > 120, `parsed ${spec.size} texts`);
    assert.deepEqual([...spec].filter((t) => !catalogue.has(t)), [], 'spec texts missing from E');
    assert.deepEqual([...catalogue].filter((t) => !spec.has(t)), [], 'E texts not in the spec');
  });

  it('defines each text once', () => {
    const values = Object.values(E);
    assert.equal(new Set(values).size, values.length);
    for (const own of Object.values(OWN)) assert.ok(!values.includes(own as never), own);
  });

  it('maps texts to HTTP statuses', () => {
    assert.equal(statusForText(E.NOT_AUTHORIZED), 401);
    assert.equal(statusForText(E.WIREGUARD_SERVER_NOT_FOUND), 404);
    assert.equal(statusForText(E.ACCOUNT_NOT_FOUND), 404);
    assert.equal(statusForText(OWN.NOT_FOUND), 404);
    for (const t of [E.CONTROLPANEL_STATUS_NOT_OK, E.NAME_IN_USE, E.ACCOUNT_LIMIT_EXCEEDED, E.LICENSE_NOT_ACTIVE, E.ACTIVE_PEERS]) assert.equal(statusForText(t), 409, t);
    for (const t of [E.IP_NOT_IN_RANGE, E.WIREGUARD_SERVER_NOT_VALID, E.FW_RULE_NOT_FOUND]) assert.equal(statusForText(t), 422, t);
    for (const t of [E.CONFIG_FREQUENCY, E.WRONG_NAME, E.KEYS_INVALID, E.WRONG_MONTH, charondebugError('dmn')]) assert.equal(statusForText(t), 400, t);
    assert.equal(statusForText(E.BACKUP_CREATION), 500);
    for (const t of [OWN.NO_FREE_SUBNET, OWN.NO_FREE_PORT]) assert.equal(statusForText(t), 409, t);
    for (const t of [OWN.PEERS_OUTSIDE_ADDRESS, OWN.NO_EXTERNAL_IP]) assert.equal(statusForText(t), 422, t);
    for (const t of [OWN.WRONG_ADDRESS, OWN.WRONG_MTU, OWN.WRONG_STATUS, OWN.BAD_REQUEST]) assert.equal(statusForText(t), 400, t);
  });

  it('gives every status from the one table, whose every text is a catalogue text', () => {
    const known = new Set<string>([...Object.values(E), ...Object.values(OWN), ...Object.values(FIREWALL_TEXTS)]);
    assert.deepEqual([...REFUSAL_STATUS.keys()].filter((t) => !known.has(t)), [], 'status entries for unknown texts');
    for (const [text, status] of REFUSAL_STATUS) assert.equal(statusForText(text), status, text);
    // each prefix text (a text followed by detail) is a host failure (500) unless listed otherwise
    const prefixes = [...known].filter((t) => t.endsWith(':'));
    assert.ok(prefixes.length >= 10, String(prefixes.length));
    for (const t of prefixes) assert.ok(t === E.BACKUP_READER || REFUSAL_STATUS.has(t), `no status chosen for ${t}`);
  });

  it('answers one status for every "already in use" text, through every route (Mark already in use is 409)', () => {
    const inUse = [...Object.values(E), ...Object.values(OWN), ...Object.values(FIREWALL_TEXTS)].filter((t) => /already in use/.test(t));
    assert.ok(inUse.length >= 6, inUse.join(', '));
    for (const t of inUse) assert.equal(statusForText(t), 409, t);
    // the data-plane refusal is converted in one place: the firewall's and the shaper's texts keep their status
    const mark = dataplaneRefusal(new FirewallError(FIREWALL_TEXTS.MARK_IN_USE));
    assert.deepEqual(mapError(mark, 'r'), { httpStatus: 409, text: FIREWALL_TEXTS.MARK_IN_USE, unexpected: false });
    const shaping = SHAPING_TEXTS.noInterface('wg9');
    assert.deepEqual(mapError(dataplaneRefusal(new ShapingError(shaping)), 'r'), { httpStatus: 422, text: shaping, unexpected: false });
    const toolFailure = new ShapingError('tc: RTNETLINK answers: File exists');
    assert.equal(dataplaneRefusal(toolFailure), toolFailure);
    assert.equal(mapError(toolFailure, 'r').httpStatus, 500);
  });

  it('ApiError carries text, status and the detail after a colon text', () => {
    const err = new ApiError(E.BACKUP_FTP_UPLOAD, '530 Login incorrect');
    assert.equal(err.message, 'FTP upload error: 530 Login incorrect');
    assert.equal(err.httpStatus, 500);
    assert.equal(new ApiError(E.ACCOUNT_NOT_FOUND).httpStatus, 404);
    assert.equal(new ApiError(E.WRONG_IP).httpStatus, 400);
  });
});

describe('envelope and mapError', () => {
  it('builds the success and error envelopes', () => {
    assert.deepEqual(ok({ a: 1 }), { error: '', msg: { a: 1 }, status: 'success' });
    assert.deepEqual(ok('success'), { error: '', msg: 'success', status: 'success' });
    assert.deepEqual(fail(E.NOT_AUTHORIZED), { error: 'Not authorized', msg: '', status: 'error' });
    assert.equal(JSON.stringify(ok([])), '{"error":"","msg":[],"status":"success"}');
  });

  it('maps ApiError, validation errors, fastify 4xx and unexpected errors', () => {
    assert.deepEqual(mapError(new ApiError(E.ACCOUNT_NOT_FOUND), 'r1'), { httpStatus: 404, text: E.ACCOUNT_NOT_FOUND, unexpected: false });
    const validation = Object.assign(new Error('x'), { validation: [{ message: E.WRONG_IP }], statusCode: 400 });
    assert.deepEqual(mapError(validation, 'r2'), { httpStatus: 400, text: E.WRONG_IP, unexpected: false });
    const media = Object.assign(new Error('Unsupported Media Type: a/b'), { code: 'FST_ERR_CTP_INVALID_MEDIA_TYPE', statusCode: 415 });
    assert.deepEqual(mapError(media, 'r3'), { httpStatus: 415, text: OWN.UNSUPPORTED_MEDIA_TYPE, unexpected: false });
    const other4xx = Object.assign(new Error('secret detail'), { statusCode: 400 });
    assert.deepEqual(mapError(other4xx, 'r4'), { httpStatus: 400, text: OWN.BAD_REQUEST, unexpected: false });
    const boom = mapError(new TypeError('cannot read x of undefined at /srv/secret.ts:1'), 'abc-123');
    assert.deepEqual(boom, { httpStatus: 500, text: 'Internal server error (request id abc-123)', unexpected: true });
    assert.equal(mapError('a string', 'q').httpStatus, 500);
    assert.equal(mapError(null, 'q').httpStatus, 500);
  });
});
