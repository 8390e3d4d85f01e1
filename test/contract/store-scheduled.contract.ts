// Contract of "once per tick across processes", run on SQLite and PostgreSQL: two platform processes (two stores on one
// database) claiming the same slot of a manifest's scheduled work, and VpnFleet's shared refresh interval.
import assert from 'node:assert/strict';
import { describe, test, type TestContext } from 'node:test';
import { manualClock } from '../../shared/clock.ts';
import { FleetStore, VPN_FLEET_MIGRATIONS, type FleetTables } from '../../module/modules/Plugin/VpnFleet/fleet-store.ts';
import { ModuleStateStore } from '../../module/platform/services/module-store.ts';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import { openModuleStore } from '../helpers/module-store.ts';
import type { OpenStore } from './store.contract.ts';

async function withTwo(t: TestContext, open: OpenStore, body: (one: QueryStore, two: QueryStore) => Promise<void>): Promise<void> {
  const opened = await open(t);
  if (!opened) return;
  try {
    await body(opened.store, await opened.another());
  } finally {
    await opened.close();
  }
}

export function runStoreContract(engine: string, open: OpenStore): void {
  describe(`scheduled work across processes: ${engine}`, () => {
    test('two processes tick the same slot: one runs', (t) => withTwo(t, open, async (one, two) => {
      const clock = manualClock(new Date('2026-11-27T10:00:00.000Z'));
      const [a, b] = [await ModuleStateStore.open(one, clock), await ModuleStateStore.open(two, clock)];
      const slot = Math.floor(clock.now().getTime() / 1000);
      for (let tick = 0; tick < 5; tick++) {
        const won = await Promise.all([a.claimSlot('Plugin/VpnFleet:refresh', slot + tick), b.claimSlot('Plugin/VpnFleet:refresh', slot + tick)]);
        assert.equal(won.filter(Boolean).length, 1, `tick ${tick}: ${JSON.stringify(won)}`);
      }
      assert.equal(await a.claimSlot('Plugin/VpnFleet:refresh', slot), false, 'a slot already run is not run again');
      assert.equal(await b.claimSlot('Payment/Other:beat', slot), true, 'slots are per work');
      assert.equal(await a.claimSlot('Plugin/VpnFleet:refresh', slot + 40, 16), true);
      assert.equal(await b.claimSlot('Plugin/VpnFleet:refresh', slot + 1), true, 'slots long past are dropped');
    }));

    test('VpnFleet: two processes find the refresh due at once: one queues it, the interval is shared', (t) => withTwo(t, open, async (one, two) => {
      const fleets = await Promise.all([one, two].map(async (store) => new FleetStore((await openModuleStore<FleetTables>('Plugin', 'VpnFleet', VPN_FLEET_MIGRATIONS, store)).store)));
      const every = 60_000;
      let now = Date.parse('2026-11-27T10:00:00.000Z');
      const never = async () => now - every;
      const claims = () => Promise.all(fleets.map((f) => f.claimRefresh(now, every, never)));
      assert.deepEqual((await claims()).filter(Boolean).length, 1, 'never refreshed: one process queues at once');
      now += every - 1;
      assert.deepEqual(await claims(), [false, false], 'not due before the interval');
      now += 1;
      assert.deepEqual((await claims()).filter(Boolean).length, 1);
      await fleets[0].refreshQueued(now + 30_000);
      now += every;
      assert.deepEqual(await claims(), [false, false], 'an admin refresh restarts the interval for every process');
      now += 30_000;
      assert.deepEqual((await claims()).filter(Boolean).length, 1);
    }));
  });
}
