// The data-cap pass at 10,000 capped services on two panels: one traffic request per panel per pass (never one per
// service), each service's bytes summed over its own period, effects queued once, the next pass reading from yesterday.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { manualClock } from '../../../shared/clock.ts';
import type { CappedService } from '../../../module/modules/Product/VpnProduct/caps/cap-directory.ts';
import { CapPass } from '../../../module/modules/Product/VpnProduct/caps/cap-pass.ts';
import { GB } from '../../../module/modules/Product/VpnProduct/caps/cap-policy.ts';
import { CapStore, type CapTables } from '../../../module/modules/Product/VpnProduct/caps/cap-store.ts';
import { vpnProductManifest } from '../../../module/modules/Product/VpnProduct/manifest.ts';
import { billingCalendar } from '../../../module/platform/platform-reads.ts';
import { openModuleStore } from '../../helpers/module-store.ts';

const capStore = async () => (await openModuleStore<CapTables>('Product', 'VpnProduct', vpnProductManifest.migrations!)).store;
import type { TrafficStatisticsEntry } from '../../../shared/wire/statistics.ts';

const N = 10_000;

test('10,000 services on two panels: two requests per pass; usage per own period; effects once', async () => {
  const db = await capStore();
  const clock = manualClock(new Date('2026-03-20T12:00:00Z'));
  const services: CappedService[] = Array.from({ length: N }, (_, i) => ({
    service_uuid: `svc-${i}`, provision_status: 'completed', customer_uuid: null,
    product_data: { data_cap_gb: 10, cap_action: 'throttle', cap_throttle_mbit: 1 },
    account_name: `acc_${i}`, panel: i % 2 ? 'fra' : 'ams',
    // half paid on the 10th (period from 03-10), half without billing (the calendar month, from 03-01)
    next_due_date: i < N / 2 ? '2026-04-10' : null, anchor_day: i < N / 2 ? 10 : null,
  }));
  // Every account used 1 GB on 03-05 (before the paid period of the first half) and i % 12 GB on 03-19.
  const days = new Map<string, TrafficStatisticsEntry[]>();
  for (const [i, s] of services.entries()) {
    const list = days.get(s.panel!) ?? [];
    list.push({ account: s.account_name!, date: '2026-03-05', traffic_download: GB, traffic_upload: 0 });
    list.push({ account: s.account_name!, date: '2026-03-19', traffic_download: (i % 12) * GB, traffic_upload: 0 });
    days.set(s.panel!, list);
  }
  const asked: string[] = [];
  const queued: string[] = [];
  const byUuid = new Map(services.map((s) => [s.service_uuid, s]));
  const pass = new CapPass({
    directory: { list: async () => services, get: async (uuid) => byUuid.get(uuid) ?? null },
    store: new CapStore(db, clock),
    client: async (panel) => ({
      trafficRange: async (from: string) => {
        asked.push(`${panel} from ${from}`);
        return (days.get(panel) ?? []).filter((d) => d.date >= from);
      },
    }),
    addTask: async (_job, _queue, input) => (queued.push(`${(input.module as { service_uuid: string }).service_uuid}:${String(input.method)}`), 'task'),
    jobOptions: { tries: 1, backoff: 0, timeout: 10, maxExceptions: 1 }, calendar: billingCalendar,
    everyMs: 300_000, clock, logger: pino({ level: 'silent' }),
  });

  const first = await pass.run();
  assert.deepEqual([first.panels, first.requests, first.services], [2, 2, N]);
  assert.deepEqual(asked.sort(), ['ams from 2026-03-01', 'fra from 2026-03-01'], 'a first read goes back to the earliest period start');
  // used: first half (period 03-10..) i % 12 GB; second half (03-01..) 1 + i % 12 GB; over the cap at 10 GB.
  const over = services.filter((_, i) => (i < N / 2 ? i % 12 : 1 + (i % 12)) >= 10).length;
  assert.equal(queued.length, over);
  assert.ok(queued.every((q) => q.endsWith(':capThrottleJob')));
  assert.equal(first.effects.filter((e) => e.kind === 'mail' && e.level === 100).length, over);

  clock.set(new Date('2026-03-20T12:15:00Z'));
  asked.length = 0;
  const second = await pass.run();
  assert.equal(second.requests, 2);
  assert.deepEqual(asked.sort(), ['ams from 2026-03-19', 'fra from 2026-03-19'], 'the next read starts at yesterday');
  assert.equal(second.effects.length, 0);
  assert.equal(queued.length, over, 'nothing queued twice');
  assert.equal(await pass.runIfDue(), null, 'not due within every_ms of the last pass');
});

test('a plan change while throttled throttles again when still over; a renewal step of an uncapped service stores nothing', async () => {
  const db = await capStore();
  const clock = manualClock(new Date('2026-03-20T12:00:00Z'));
  const capped: CappedService = {
    service_uuid: 'svc-a', provision_status: 'completed', customer_uuid: null, product_data: { data_cap_gb: 1, cap_action: 'throttle' },
    account_name: 'acc_a', panel: 'ams', next_due_date: null, anchor_day: null,
  };
  const plain: CappedService = { ...capped, service_uuid: 'svc-b', account_name: 'acc_b', product_data: {} };
  const queued: string[] = [];
  const store = new CapStore(db, clock);
  const pass = new CapPass({
    directory: { list: async () => [capped], get: async (uuid) => [capped, plain].find((s) => s.service_uuid === uuid) ?? null },
    store,
    client: async () => ({ trafficRange: async () => [{ account: 'acc_a', date: '2026-03-19', traffic_download: 2 * GB, traffic_upload: 0 }] }),
    addTask: async (_job, _queue, input) => (queued.push(String(input.method)), 'task'),
    jobOptions: { tries: 1, backoff: 0, timeout: 10, maxExceptions: 1 }, calendar: billingCalendar, everyMs: 300_000, clock, logger: pino({ level: 'silent' }),
  });
  await pass.run();
  assert.deepEqual(queued, ['capThrottleJob']);
  assert.deepEqual(await pass.packageChanged('svc-a'), [{ kind: 'apply', action: 'throttle' }]);
  assert.deepEqual(queued, ['capThrottleJob', 'capThrottleJob'], 'the new plan\'s rate replaced the throttle: throttled again');
  assert.deepEqual(await pass.stepService('svc-b'), []);
  assert.equal(await store.state('svc-b'), null);
});
