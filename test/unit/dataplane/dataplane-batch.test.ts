// A batch of account changes planned per server: net change per account, one merged change (and inverse) per subsystem.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { merge, planAccountBatch, type AccountChange } from '../../../panel/services/dataplane-batch.ts';
import type { AccountRow } from '../../../panel/store/repositories/accounts.ts';
import type { ServerRow } from '../../../panel/store/repositories/servers.ts';

const server = (name: string) => ({ id: name.length, interface_name: name } as ServerRow);
const row = (id: number, over: Partial<AccountRow> = {}): AccountRow => ({
  id, name: `a${id}`, username: `u${id}`, password: 'x', status: 'enable', server_id: 1, ip: (10 << 24) + 256 + id + 1,
  allowed_ips_ipv6: null, b_download: 8, b_upload: 4, mangle: 100 + id, private_key: '', public_key: `K${id}`, ...over,
});
const change = (s: ServerRow, before: AccountRow | null, after: AccountRow | null): AccountChange => ({ server: s, before, after });

describe('planAccountBatch', () => {
  it('merges the changes of one server into one call per subsystem, with the inverse for the undo', () => {
    const wg0 = server('wg0');
    const [batch, ...rest] = planAccountBatch([
      change(wg0, null, row(1)),
      change(wg0, row(2), null),
      change(wg0, row(3), row(3, { b_download: 9 })),
    ]);
    assert.equal(rest.length, 0);
    assert.deepEqual(batch.wg, { upsert: [{ publicKey: 'K1', allowedIps: ['10.0.1.2/32'], persistentKeepalive: 0 }], remove: [] });
    assert.deepEqual(batch.wgLeaving, ['K2'], 'the deleted peer leaves after its mark and classes');
    assert.deepEqual(batch.wgUndo, { upsert: [], remove: ['K1'] });
    assert.deepEqual(batch.fw, { upsert: [{ mark: 101, address: '10.0.1.2', addressIpv6: null }], remove: [102] });
    assert.deepEqual(batch.tc?.upsert.map((p) => [p.key, p.downloadMbit]), [['K1', 8], ['K3', 9]]);
    assert.deepEqual(batch.tc?.remove, ['K2']);
    assert.deepEqual(batch.changes.map((c) => c.after?.id ?? -c.before!.id), [1, -2, 3]);
    assert.deepEqual(batch.readdressed.map((p) => p.ipv4), ['10.0.1.2']);
  });

  it('collapses the changes of one account: created then changed is one create; created then deleted is nothing', () => {
    const wg0 = server('wg0');
    const [batch] = planAccountBatch([
      change(wg0, null, row(1)),
      change(wg0, row(1), row(1, { b_upload: 2 })),
      change(wg0, null, row(2)),
      change(wg0, row(2), null),
    ]);
    assert.deepEqual(batch.changes, [change(wg0, null, row(1, { b_upload: 2 }))]);
    assert.deepEqual(batch.tc?.upsert.map((p) => [p.key, p.uploadMbit]), [['K1', 2]]);
    assert.deepEqual(batch.wg?.remove, []);
  });

  it('splits by server; suspends park the peer, resumes put the kept endpoint back; a password change reaches only followers', () => {
    const [a, b] = planAccountBatch([
      change(server('wg0'), row(1), row(1, { status: 'disable' })),
      change(server('wg1'), row(2, { status: 'disable' }), row(2)),
      change(server('wg0'), row(3), row(3, { password: 'y' })),
    ]);
    assert.deepEqual([a.server.interface_name, b.server.interface_name], ['wg0', 'wg1']);
    assert.equal(a.changes.length, 2);
    assert.deepEqual(b.resumed.map((r) => [r.accountId, r.peer.publicKey]), [[2, 'K2']]);
    assert.deepEqual(a.wg, { upsert: [{ publicKey: 'K1', allowedIps: [], persistentKeepalive: 0 }], remove: [] }, 'parked: no allowed IPs, counters kept');
    assert.deepEqual(a.wgUndo, { upsert: [{ publicKey: 'K1', allowedIps: ['10.0.1.2/32'], persistentKeepalive: 0 }], remove: [] });
    assert.deepEqual(a.wgLeaving, []);
  });

  it('deleted peers leave in a wg set of their own (a suspended one too: it may still be parked)', () => {
    const wg0 = server('wg0');
    const [batch] = planAccountBatch([change(wg0, row(1), null), change(wg0, row(2, { status: 'disable' }), null), change(wg0, null, row(3))]);
    assert.deepEqual(batch.wgLeaving, ['K1', 'K2']);
    assert.deepEqual(batch.wg?.remove, [], 'not in the batch\'s first wg set');
    assert.deepEqual(batch.wg?.upsert.map((p) => p.publicKey), ['K3']);
    assert.deepEqual(batch.fw?.remove, [101]);
  });

  it('hands a freed address and key on in order: the removal of the old holder goes, the new peer stays', () => {
    const wg0 = server('wg0');
    const [batch] = planAccountBatch([change(wg0, row(1), null), change(wg0, null, row(2, { ip: row(1).ip, public_key: 'K1' }))]);
    assert.deepEqual(batch.wg, { upsert: [{ publicKey: 'K1', allowedIps: ['10.0.1.2/32'], persistentKeepalive: 0 }], remove: [] });
    assert.deepEqual(batch.fw, { upsert: [{ mark: 102, address: '10.0.1.2', addressIpv6: null }], remove: [101] });
  });
});

describe('merge', () => {
  it('keeps the last upsert of a key and drops a removal superseded by an upsert (and the reverse)', () => {
    const key = (x: { k: string }) => x.k;
    assert.deepEqual(merge([{ upsert: [{ k: 'a', v: 1 }], remove: [] }, { upsert: [{ k: 'a', v: 2 }], remove: ['b'] }], key), { upsert: [{ k: 'a', v: 2 }], remove: ['b'] });
    assert.deepEqual(merge([{ upsert: [], remove: ['a'] }, { upsert: [{ k: 'a', v: 3 }], remove: [] }], key), { upsert: [{ k: 'a', v: 3 }], remove: [] });
    assert.deepEqual(merge([{ upsert: [{ k: 'a', v: 3 }], remove: [] }, { upsert: [], remove: ['a'] }], key), { upsert: [], remove: ['a'] });
    assert.equal(merge([null, null], key), null);
  });
});
