// One clock: a platform opened with a manual Clock dates its migrations, products, services, tokens, module states and
// task records by it, retries become due when it moves, and the lost-task sweeper measures a service's age with it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { manualClock } from '../../../shared/clock.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { ORPHANED_REASON, StuckServiceSweeper } from '../../../module/platform/sweeper.ts';
import { ledgerOf } from '../../fixtures/platform/ledger.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

const START = new Date('2031-02-03T04:05:06.000Z');

/** A platform on a fresh data directory whose clock stands at START; closed and removed after `fn`. */
async function withClockPlatform(name: string, fn: (platform: Platform, clock: ReturnType<typeof manualClock>) => Promise<void> | void): Promise<void> {
  const dir = tempDir(name);
  const clock = manualClock(START);
  const platform = await Platform.open({ dataDir: dir, logger: pino({ level: 'silent' }), clock, moduleWatchMs: 0 });
  try {
    await fn(platform, clock);
  } finally {
    await platform.close();
    removeDir(dir);
  }
}

test('every record the platform writes is dated by its injected clock', async () => {
  await withClockPlatform('clock', async (platform, clock) => {
    const at = START.toISOString();
    assert.ok((await ledgerOf(platform.store)).every((m) => m.applied_at === at), 'migrations dated by the clock');
    const product = (await platform.products.create('VpnProduct', { server_location: 'ams' }));
    assert.equal(product.created_at, at);
    const service = (await platform.services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann' } }));
    assert.deepEqual([service.created_at, service.updated_at], [at, at]);
    clock.advance(1_000);
    await platform.services.saveServiceData(service.uuid, { username: 'ann2' });
    assert.equal((await platform.services.get(service.uuid))!.updated_at, '2031-02-03T04:05:07.000Z');
    await platform.tokens.create('c');
    await platform.workerTokens.create('w');
    assert.deepEqual((await platform.tokens.list()).concat(await platform.workerTokens.list()).map((t) => t.created_at), ['2031-02-03T04:05:07.000Z', '2031-02-03T04:05:07.000Z']);
    const added = (await platform.taskStore.insert({ backend: 'embedded', job: 'J', queue: 'q', input: {}, tags: ['x'], options: { tries: 2, backoff: 5, timeout: 30, maxExceptions: 2 } }));
    assert.equal((await platform.taskStore.get(added.id))!.createdAt, '2031-02-03T04:05:07.000Z');
    const versions = await platform.store.db.selectFrom('module_versions').select('updated_at').distinct().execute();
    assert.ok(versions.every((v) => v.updated_at === at), JSON.stringify(versions));
  });
});

test('a claimed task is due by the store clock, and its retry only when that clock passes the backoff', async () => {
  await withClockPlatform('clock-task', async (platform, clock) => {
    const store = platform.taskStore;
    const { id } = (await store.insert({ backend: 'embedded', job: 'J', queue: 'q', input: {}, tags: ['x'], options: { tries: 2, backoff: 5, timeout: 30, maxExceptions: 2 } }));
    const claimed = (await store.claimNext('embedded', 'w1', 30_000));
    assert.equal(claimed?.record.id, id);
    await store.settle(id, 'w1', { status: 'pending', exceptions: 0, lastError: 'boom', result: undefined, availableAt: clock.now().getTime() + 5_000 });
    assert.equal((await store.claimNext('embedded', 'w1', 30_000)), null, 'backoff not over by the clock');
    clock.advance(5_000);
    assert.equal((await store.claimNext('embedded', 'w1', 30_000))?.record.id, id, 'due once the clock moved');
  });
});

test('the sweeper measures a processing service\'s age with the clock, not the wall time', async () => {
  await withClockPlatform('clock-sweeper', async (platform, clock) => {
    const product = (await platform.products.create('VpnProduct', { server_location: 'ams' }));
    const { uuid } = (await platform.services.create({ product_uuid: product.uuid, module_name: 'VpnProduct', service_data: { username: 'ann' } }));
    await platform.lifecycle.set(uuid, 'processing');
    const sweeper = new StuckServiceSweeper({ services: platform.services, queue: platform.queue, lifecycle: platform.lifecycle, logger: platform.logger, clock });
    clock.advance(59_000);
    assert.deepEqual(await sweeper.run(), [], 'young by the clock (though dated years ahead of the wall time)');
    clock.advance(2_000);
    assert.deepEqual(await sweeper.run(), [uuid]);
    const service = (await platform.services.get(uuid))!;
    assert.equal(service.provision_status, 'failed');
    assert.equal(service.status_reason, ORPHANED_REASON);
    assert.equal(service.updated_at, '2031-02-03T04:06:07.000Z');
  });
});
