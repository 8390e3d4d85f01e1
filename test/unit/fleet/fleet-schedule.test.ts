// VpnFleet's scheduled work: every tick asks whether a refresh is due; once refresh_every_ms passed it queues
// refreshJob with Task.add (ModuleJob, queue Module, tags fleet_refresh); an admin refresh restarts the interval.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
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
    db: null, sealer: null, worker: null, config: { enabled: true, version: '1.0.0', refresh_every_ms: 10_000 },
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
