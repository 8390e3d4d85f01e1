// Contract of the modules' stores on the platform's query layer (each module's own scope migrated by `store.migrate`,
// builder queries through its module store), run on SQLite and PostgreSQL: VpnProduct's panel directory (the
// `panel-directory` capability), VpnFleet's fleet tables, the once-only ledgers (Smtp's send per event key, VpnProduct's
// link claim, cap transitions and cap passes: two concurrent callers, one wins), the module host's switch version and
// the host's read API.
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { manualClock } from '../../shared/clock.ts';
import { SecretBox } from '../../shared/secret-box.ts';
import { vpnFleetManifest } from '../../module/modules/Plugin/VpnFleet/manifest.ts';
import { FleetStore, type FleetTables } from '../../module/modules/Plugin/VpnFleet/fleet-store.ts';
import { smtpManifest } from '../../module/modules/Notification/Smtp/manifest.ts';
import { SendStore, type NewSend, type SendTables } from '../../module/modules/Notification/Smtp/send-store.ts';
import { vpnProductManifest } from '../../module/modules/Product/VpnProduct/manifest.ts';
import { LinkIssueLog, type LinkTables } from '../../module/modules/Product/VpnProduct/link-bound.ts';
import { CapStore, type CapTables } from '../../module/modules/Product/VpnProduct/caps/cap-store.ts';
import type { CapState } from '../../module/modules/Product/VpnProduct/caps/cap-policy.ts';
import { panelDirectoryCapability } from '../../module/modules/Product/VpnProduct/panel-directory.ts';
import { PanelRegistry } from '../../module/modules/Product/VpnProduct/panel-registry.ts';
import { PanelStore, type PanelTables } from '../../module/modules/Product/VpnProduct/panel-store.ts';
import { QueryPlatformReads } from '../../module/platform/platform-reads.ts';
import { ModuleStateStore } from '../../module/platform/services/module-store.ts';
import { StoreScopeError } from '../../module/platform/store/query/module-store.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { ProductQueries } from '../../module/platform/store/query/repositories/products.ts';
import { openModuleStore } from '../helpers/module-store.ts';
import { runPanelDirectoryContract } from './panel-directory.contract.ts';
import { withStore, type OpenStore } from './store.contract.ts';


const vpnProduct = <T>(store: QueryStore) => openModuleStore<T>('Product', 'VpnProduct', vpnProductManifest.migrations!, store).then((m) => m.store);

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`module stores: ${engine}`, () => {
    runPanelDirectoryContract(`VpnProduct on ${engine}`, async (t) => {
      const opened = await open(t);
      if (!opened) return null;
      const panels = new PanelStore(await vpnProduct<PanelTables>(opened.store), SecretBox.fromKey(randomBytes(32)), manualClock(new Date('2026-11-27T10:00:00Z')));
      const registry = new PanelRegistry(panels, { connections: 1, headersTimeoutMs: 2_000, bodyTimeoutMs: 2_000 });
      return {
        directory: panelDirectoryCapability(registry, panels),
        register: async (panel) => void (await panels.upsert(panel)),
        close: async () => {
          await registry.close();
          await opened.close();
        },
      };
    });

    test('VpnProduct panels: sealed at rest, locations, panels of a location; the module store refuses the platform\'s tables', (t) => withStore(t, open, async (store, clock) => {
      const module = await vpnProduct<PanelTables>(store);
      const panels = new PanelStore(module, SecretBox.fromKey(randomBytes(32)), clock);
      await panels.upsert({ name: 'ams-1', location: 'ams', api_url: 'http://a', access_hash: 'h'.repeat(80) });
      await panels.upsert({ name: 'ams-0', location: 'ams', api_url: 'http://b', access_hash: 'i'.repeat(80) });
      assert.deepEqual(await panels.locations(), ['ams']);
      assert.deepEqual(await panels.panelsAt('ams'), ['ams-0', 'ams-1']);
      assert.equal((await panels.connection('ams-1'))?.access_hash, 'h'.repeat(80));
      const raw = await module.db.selectFrom('vpn_product_panels').select('access_hash_sealed').where('name', '=', 'ams-1').executeTakeFirstOrThrow();
      assert.notEqual(raw.access_hash_sealed, 'h'.repeat(80));
      assert.throws(() => (module.db as any).selectFrom('services').selectAll().compile(), StoreScopeError);
    }));

    test('VpnFleet: snapshots replace, retain drops the unregistered, events newest first by panel', (t) => withStore(t, open, async (store) => {
      const fleet = new FleetStore((await openModuleStore<FleetTables>('Plugin', 'VpnFleet', vpnFleetManifest.migrations!, store)).store);
      const snapshot = (name: string, up: boolean, at: string) => ({
        name, location: 'ams', api_url: `http://${name}`, up, status: up ? 'OK' : null, version: '2', license: null, license_valid: up ? true : null,
        accounts: up ? 3 : null, accounts_available: up ? 7 : null, servers: null, online_peers: null, error: up ? null : 'down', refreshed_at: at,
      });
      assert.equal(await fleet.put(snapshot('p1', true, '2026-11-27T10:00:00.000Z')), null);
      assert.equal((await fleet.put(snapshot('p1', false, '2026-11-27T10:01:00.000Z')))?.up, true);
      await fleet.put(snapshot('p2', true, '2026-11-27T10:01:00.000Z'));
      assert.equal(await fleet.lastRefreshedAt(), Date.parse('2026-11-27T10:01:00.000Z'));
      assert.deepEqual(await fleet.retain(['p2']), ['p1']);
      assert.deepEqual((await fleet.list()).map((p) => [p.name, p.up, p.license_valid]), [['p2', true, true]]);
      await fleet.record('2026-11-27T10:02:00.000Z', 'panel.up', { panel: 'p2' });
      await fleet.record('2026-11-27T10:03:00.000Z', 'panel.down', { panel: 'p1' });
      assert.deepEqual((await fleet.events()).map((e) => e.event), ['panel.down', 'panel.up']);
      assert.deepEqual((await fleet.events({ panel: 'p2' })).map((e) => e.panel), ['p2']);
    }));

    test('Smtp: one send per event key — two concurrent records of one event, one is created; marks are once', (t) => withStore(t, open, async (store, clock) => {
      const sends = new SendStore((await openModuleStore<SendTables>('Notification', 'Smtp', smtpManifest.migrations!, store)).store, SecretBox.fromKey(randomBytes(32)), clock);
      const mail: NewSend = {
        channel_uuid: null, recipient: 'a@example.com', subject: 'Ready', tries: 3, status: 'queued', event: 'service.provisioned',
        event_key: 'service.provisioned:svc-1:2026-11-27T10:00:00.000Z', mail: { text: 'link', html: '<p>link</p>', attachments: [] },
      };
      const [one, two] = await Promise.all([sends.create(mail), sends.create(mail)]);
      assert.deepEqual([one.created, two.created].sort(), [false, true], 'one process records the mail');
      assert.equal(one.record.uuid, two.record.uuid, 'the other finds the same send');
      assert.equal((await sends.list({ event: 'service.provisioned' })).length, 1);
      assert.deepEqual(await sends.mail(one.record.uuid), mail.status === 'queued' ? mail.mail : null);
      const unkeyed = { ...mail, event_key: null };
      assert.ok((await sends.create(unkeyed)).created && (await sends.create(unkeyed)).created, 'sends without a key are never merged');
      assert.equal(await sends.beginAttempt(one.record.uuid), 1);
      await sends.markSent(one.record.uuid, '250 ok');
      await sends.markSent(one.record.uuid, '250 again');
      await sends.markFailure(one.record.uuid, 'late', true);
      const done = (await sends.get(one.record.uuid))!;
      assert.deepEqual([done.status, done.server_reply], ['sent', '250 ok']);
      assert.equal(await sends.mail(one.record.uuid), null, 'the body is dropped once delivered');
    }));

    test('VpnProduct link claims: two concurrent callers, one wins; the bound counts across claims', (t) => withStore(t, open, async (store, clock) => {
      const issues = new LinkIssueLog(await vpnProduct<LinkTables>(store), clock);
      const bound = { limit: 2, window_minutes: 15 };
      const [a, b] = await Promise.all([issues.take('svc-1', bound), issues.take('svc-1', bound)]);
      assert.deepEqual([a.ok, b.ok].sort(), [false, true]);
      const won = (a.ok ? a : b) as Extract<typeof a, { ok: true }>;
      await issues.finish(won.claim);
      const again = await issues.take('svc-1', bound);
      assert.ok(again.ok);
      await issues.finish(again.claim);
      assert.deepEqual(await issues.take('svc-1', bound), { ok: false, busy: false, retryAfterMs: 15 * 60_000 });
    }));

    test('VpnProduct caps: a state transition and a pass are claimed once; recorded days sum, all or nothing', (t) => withStore(t, open, async (store, clock) => {
      const caps = new CapStore(await vpnProduct<CapTables>(store), clock);
      const first: CapState = { period_start: '2026-11-01', period_end: '2026-12-01', used_bytes: 5, warned: false, exceeded: false, applied: null };
      const next: CapState = { ...first, used_bytes: 12, warned: true, exceeded: true, applied: 'throttle' };
      assert.deepEqual((await Promise.all([caps.transition('svc-1', null, first), caps.transition('svc-1', null, first)])).sort(), [false, true]);
      assert.deepEqual((await Promise.all([caps.transition('svc-1', first, next), caps.transition('svc-1', first, next)])).sort(), [false, true]);
      assert.deepEqual(await caps.state('svc-1'), next);
      assert.deepEqual(await caps.withAction(), ['svc-1']);
      assert.equal(await caps.transition('svc-1', first, first), false, 'a stale state never overwrites');
      assert.equal(await caps.forget('svc-1', first), false);
      const now = clock.now().getTime();
      assert.deepEqual((await Promise.all([caps.claimPass(now, 300_000), caps.claimPass(now, 300_000)])).sort(), [false, true]);
      assert.equal(await caps.claimPass(now + 299_999, 300_000), false, 'not due yet');
      assert.equal(await caps.claimPass(now + 300_000, 300_000), true);
      await caps.recordDays([{ service_uuid: 'svc-1', day: '2026-11-02', bytes: 4 }, { service_uuid: 'svc-1', day: '2026-11-03', bytes: 6 }]);
      await caps.recordDays([{ service_uuid: 'svc-1', day: '2026-11-03', bytes: 7 }]);
      assert.equal(await caps.usedBetween('svc-1', '2026-11-01', '2026-12-01'), 11);
      await assert.rejects(caps.recordDays([{ service_uuid: 'svc-1', day: '2026-11-04', bytes: 1 }, { service_uuid: 'svc-1', day: '2026-11-05', bytes: null as unknown as number }]));
      assert.equal(await caps.usedBetween('svc-1', '2026-11-01', '2026-12-01'), 11, 'a failed batch leaves nothing behind');
      await caps.setNextFrom('ams', '2026-11-26');
      assert.equal(await caps.nextFrom('ams'), '2026-11-26');
      assert.equal(await caps.pruneBefore('2026-11-03'), 1);
    }));

    test('module switches: each record moves the switch version with it', (t) => withStore(t, open, async (store, clock) => {
      const states = await ModuleStateStore.open(store, clock);
      assert.equal(await states.version(), 0);
      assert.equal(await states.get('Plugin', 'VpnFleet'), null);
      await Promise.all([states.record('Plugin', 'VpnFleet', false, 'deactivate', 'success'), states.record('Product', 'VpnProduct', true, 'activate', 'success')]);
      assert.equal(await states.version(), 2);
      assert.deepEqual(await states.get('Plugin', 'VpnFleet'), { ...(await states.get('Plugin', 'VpnFleet'))!, active: false, last_action: 'deactivate', last_result: 'success' });
      await states.record('Plugin', 'VpnFleet', true, 'activate', 'success');
      assert.equal((await states.get('Plugin', 'VpnFleet'))?.active, true);
      assert.equal(await states.version(), 3);
    }));

    test('the host read API: member matches, capped plans, the notification channel', (t) => withStore(t, open, async (store, clock) => {
      const reads = new QueryPlatformReads(store);
      const products = new ProductQueries(store, clock);
      const capped = await products.create('VpnProduct', { server_location: 'ams', data_cap_gb: '50' });
      const plain = await products.create('VpnProduct', { server_location: 'ams', data_cap_gb: '' });
      const service = async (product: string, username: string, status: string) => {
        const uuid = randomUUID();
        const at = clock.now().toISOString();
        await store.db.insertInto('services').values({ uuid, product_uuid: product, module: 'VpnProduct', service_data: JSON.stringify({ username, password: 'pw' }), provision_status: status, status_reason: null, customer_uuid: null, created_at: at, updated_at: at }).execute();
        clock.advance(1_000);
        return uuid;
      };
      const alice = await service(capped.uuid, 'alice', 'completed');
      await service(plain.uuid, 'bob', 'completed');
      await service(capped.uuid, 'carol', 'terminated');
      assert.equal(await reads.findService({ module: 'VpnProduct', live: true, productData: { server_location: 'ams' }, serviceData: { username: 'alice' } }), alice);
      assert.equal(await reads.findService({ module: 'VpnProduct', live: true, serviceData: { username: 'carol' } }), null);
      assert.deepEqual(await reads.serviceUuids({ module: 'VpnProduct', statuses: ['completed'], productNumberAbove: { data_cap_gb: 0 } }), [alice]);
      assert.deepEqual((await reads.service(alice))?.service_data, { username: 'alice' });
      assert.equal(await reads.notificationChannel('Smtp'), null);
      assert.equal(reads.calendar.addMonths('2026-01-31', 1, 31), '2026-02-28');
    }));
  });
}
