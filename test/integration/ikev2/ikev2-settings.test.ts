// IKEv2 advanced settings through the API: round trip, defaults, every text and range edge, both Forceencaps/Keyingtries texts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHARONDEBUG_SUBSYSTEMS } from '../../../shared/wire/error-texts.ts';
import { IKEV2_DEFAULTS } from '../../../panel/schemas/ikev2.ts';
import { envelope, makeHarness } from '../panel-core/harness.ts';

const form = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, String(v)]));

test('defaults, round trip, reset', async () => {
  const h = await makeHarness();
  try {
    const got = envelope(await h.call('GET', '/api/v1/ikev2/advanced_settings')).msg;
    assert.deepEqual(got, IKEV2_DEFAULTS);
    const changed = { ...IKEV2_DEFAULTS, charondebug_ike: 2, charondebug_knl: -1, esp: 'aes128gcm16-ecp256!', rekey: 'yes', fragmentation: 'force', lifetime: 86400, rekeyfuzz: 0 };
    const put = envelope(await h.call('PUT', '/api/v1/ikev2/advanced_settings', { form: form(changed) }));
    assert.equal(put.error, '');
    assert.deepEqual(put.msg, changed);
    assert.deepEqual(envelope(await h.call('GET', '/api/v1/ikev2/advanced_settings')).msg, changed);
    const reset = envelope(await h.call('PUT', '/api/v1/ikev2/advanced_settings/default'));
    assert.deepEqual(reset.msg, IKEV2_DEFAULTS);
  } finally {
    await h.close();
  }
});

test('every text and range edge; a refused PUT changes nothing', async () => {
  const h = await makeHarness();
  try {
    const base = form(IKEV2_DEFAULTS);
    const bad = async (field: string, value: string | undefined) => {
      const body = { ...base };
      if (value === undefined) delete body[field];
      else body[field] = value;
      return envelope(await h.call('PUT', '/api/v1/ikev2/advanced_settings', { form: body })).error;
    };
    for (const s of CHARONDEBUG_SUBSYSTEMS) {
      const text = `Incorrect value Charondebug ${s} (should be -1 to 4)`;
      assert.equal(await bad(`charondebug_${s}`, '5'), text);
      assert.equal(await bad(`charondebug_${s}`, '-2'), text);
      assert.equal(await bad(`charondebug_${s}`, undefined), text);
    }
    const cases: Array<[string, string[], string[], string]> = [
      ['uniqueids', ['yes', 'no', 'never', 'replace', 'keep'], ['maybe'], 'Incorrect value Uniqueids (should be yes|no|never|replace|keep)'],
      ['strictcrlpolicy', ['ifuri'], ['strict'], 'Incorrect value Strictcrlpolicy (should be yes|no|ifuri)'],
      ['authby', ['rsasig', 'never'], ['eap'], 'Incorrect value Authby (should be pubkey|rsasig|ecdsasig|psk|secret|xauthrsasig|xauthpsk|never)'],
      ['closeaction', ['restart'], ['trap'], 'Incorrect value Closeaction (should be none|clear|hold|restart)'],
      ['compress', ['yes'], ['1'], 'Incorrect value Compress (should be yes|no)'],
      ['dpdaction', ['hold'], ['x'], 'Incorrect value Dpdaction (should be none|clear|hold|restart)'],
      ['dpddelay', ['0', '2147483647'], ['-1', '2147483648', '1.5'], 'Incorrect value Dpddelay (should be 0 to 2147483647)'],
      ['dpdtimeout', ['0', '2147483647'], ['-1', '2147483648'], 'Incorrect value Dpdtimeout (should be 0 to 2147483647)'],
      ['inactivity', ['0'], ['-1'], 'Incorrect value Inactivity (should be 0 to 2147483647)'],
      ['esp', ['aes256-sha256'], ['', '   '], 'Esp must be filled'],
      ['esp', [], ['aes 256', 'a;b', 'x'.repeat(1100)], 'Wrong proposal format (algorithm keywords joined by - and , with an optional trailing !)'],
      ['forceencaps', ['no'], ['force'], 'Incorrect value Forceencaps (should be yes|no)'],
      ['fragmentation', ['accept', 'force', 'no'], ['maybe'], 'Incorrect value Forceencaps (should be yes|accept|force|no)'],
      ['ike', ['aes256-sha256-modp2048!'], [''], 'Ike must be filled'],
      ['ikelifetime', ['0', '2147483647'], ['-1', '2147483648'], 'Incorrect value Ikelifetime (should be 0 to 2147483647)'],
      ['installpolicy', ['no'], ['maybe'], 'Incorrect value Installpolicy (should be yes|no)'],
      ['keyingtries', ['1', '2147483647'], ['0', '2147483648'], 'Incorrect value Keyingtries (should be 1 to 2147483647)'],
      ['lifetime', ['1', '86400'], ['0', '86401'], 'Incorrect value Lifetime (should be 1 to 86400)'],
      ['margintime', ['1', '2147483647'], ['0'], 'Incorrect value Margintime (should be 1 to 2147483647)'],
      ['mobike', ['no'], ['x'], 'Incorrect value Mobike (should be yes|no)'],
      ['modeconfig', ['push'], ['x'], 'Incorrect value Modeconfig (should be push|pull)'],
      ['reauth', ['no'], ['x'], 'Incorrect value Reauth (should be yes|no)'],
      ['rekey', ['yes'], ['x'], 'Incorrect value Rekey (should be yes|no)'],
      ['rekeyfuzz', ['0', '2147483647'], ['-1', '2147483648'], 'Incorrect value Keyingtries (should be 0 to 2147483647)'],
      ['type', ['transport', 'transport_proxy', 'passthrough', 'drop'], ['beet'], 'Incorrect value Type (should be tunnel|transport|transport_proxy|passthrough|drop)'],
    ];
    for (const [field, good, wrong, text] of cases) {
      for (const v of wrong) assert.equal(await bad(field, v), text, `${field}=${v}`);
      if (!['esp', 'ike'].includes(field) || text.endsWith('filled')) assert.equal(await bad(field, undefined), text, `${field} missing`);
      for (const v of good) assert.equal(await bad(field, v), '', `${field}=${v}`);
    }
    // a trailing ! arrives URL-encoded as %21 (URLSearchParams encodes it)
    assert.equal(await bad('esp', 'aes256-sha1!'), '');
    assert.equal((envelope(await h.call('GET', '/api/v1/ikev2/advanced_settings')).msg as { esp: string }).esp, 'aes256-sha1!');
    // a refused PUT leaves the stored settings as they were
    assert.equal(await bad('lifetime', '0'), 'Incorrect value Lifetime (should be 1 to 86400)');
    assert.equal((envelope(await h.call('GET', '/api/v1/ikev2/advanced_settings')).msg as { esp: string }).esp, 'aes256-sha1!');
  } finally {
    await h.close();
  }
});
