// VpnFleet's scheduled work: every tick asks whether a refresh is due; once refresh_every_ms passed it queues
// refreshJob with Task.add (ModuleJob, queue Module, tags fleet_refresh); an admin refresh restarts the interval.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { CapabilityHost } from '../../../module/platform/capability-host.ts';
import { vpnFleetManifest } from '../../../module/modules/Plugin/VpnFleet/manifest.ts';
import { Task } from '../../../module/task/task.ts';
import type { TaskQueue } from '../../../module/task/queue.ts';

test('the scheduled tick queues refreshJob through Task.add once per refresh_every_ms', async () => {
  const added: Array<{ job: string; queue: string; input: Record<string, unknown>; tags: string[]; options: unknown }> = [];
  const fake = {
    add: async (job: string, queue: string, input: Record<string, unknown>, tags: string[], options: unknown) => {
      added.push({ job, queue, input, tags, options });
      return { id: `t${added.length}`, duplicate: false };
    },
  } as unknown as TaskQueue;
  let now = 0;
  const ext = vpnFleetManifest.services!({
    store: null, platform: null, capabilities: new CapabilityHost(), sealer: null, worker: null, config: { enabled: true, version: '1.0.0', refresh_every_ms: 10_000 },
    logger: pino({ level: 'silent' }), clock: { now: () => new Date(now) },
  });
  const tick = vpnFleetManifest.scheduled![0];
  Task.use(fake);
  try {
    await tick.run(ext);
    now = 9_999;
    await tick.run(ext);
    assert.equal(added.length, 0, 'not due before the interval');
    now = 10_000;
    await tick.run(ext);
    assert.equal(added.length, 1);
    assert.equal(added[0].job, 'ModuleJob');
    assert.equal(added[0].queue, 'Module');
    assert.deepEqual(added[0].input, { module: { type: 'Plugin', name: 'VpnFleet' }, method: 'refreshJob' });
    assert.deepEqual(added[0].tags, ['fleet_refresh']);
    now = 15_000;
    assert.equal(await ext.queueRefresh(), 't2', 'the admin queues one now');
    now = 24_999;
    await tick.run(ext);
    assert.equal(added.length, 2, 'the interval restarts from the admin refresh');
    now = 25_000;
    await tick.run(ext);
    assert.equal(added.length, 3);
  } finally {
    Task.use(null);
  }
  assert.equal(ext.fleet, null, 'no store without the platform database (remote worker)');
});

test('with the platform database the first tick refreshes a fleet never refreshed, or one whose snapshot is stale', async () => {
  const { openModuleStore } = await import('../../helpers/module-store.ts');
  const { VPN_FLEET_MIGRATIONS, FleetStore } = await import('../../../module/modules/Plugin/VpnFleet/fleet-store.ts');
  type Tables = import('../../../module/modules/Plugin/VpnFleet/fleet-store.ts').FleetTables;
  const added: string[] = [];
  const fake = { add: async () => ({ id: `t${added.push('x')}`, duplicate: false }) } as unknown as TaskQueue;
  const never = await openModuleStore<Tables>('Plugin', 'VpnFleet', VPN_FLEET_MIGRATIONS);
  const known = await openModuleStore<Tables>('Plugin', 'VpnFleet', VPN_FLEET_MIGRATIONS);
  let now = Date.parse('2026-11-23T12:00:00Z');
  const make = (db: typeof never.store) => vpnFleetManifest.services!({
    store: db, platform: { service: async () => null } as never, capabilities: new CapabilityHost(), sealer: null, worker: null, config: { enabled: true, version: '1.0.0', refresh_every_ms: 60_000 },
    logger: pino({ level: 'silent' }), clock: { now: () => new Date(now) },
  });
  const tick = vpnFleetManifest.scheduled![0];
  Task.use(fake);
  try {
    await tick.run(make(never.store));
    assert.equal(added.length, 1, 'never refreshed: at once');

    await new FleetStore(known.store).put({ name: 'p1', location: 'de', api_url: 'http://p1', up: true, status: 'OK', version: '1', license: 'x',
      license_valid: true, accounts: 1, accounts_available: 9, servers: 1, online_peers: 0, error: null, refreshed_at: new Date(now - 20_000).toISOString() });
    const fresh = make(known.store);
    await tick.run(fresh);
    assert.equal(added.length, 1, 'a snapshot 20 s old is fresh: the interval runs from it');
    now += 40_000;
    await tick.run(make(known.store));
    assert.equal(added.length, 2, 'due 60 s after the stored snapshot (any process)');
    await tick.run(fresh);
    assert.equal(added.length, 2, 'another process ticking the same moment queues nothing: the interval is shared');

    now += 3_600_000;
    await tick.run(make(known.store));
    assert.equal(added.length, 3, 'an hour later (say, after a restart) it is refreshed at the first tick');
  } finally {
    Task.use(null);
    await never.query.close();
    await known.query.close();
  }
});
