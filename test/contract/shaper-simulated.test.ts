// Runs the shaper contract against the simulated twin, plus the twin's own hooks and the peer book's checks.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { SimulatedShaper, SimulatedTc } from '../../panel/dataplane/shaping/simulated/simulated-shaper.ts';
import { runShaperContract } from './shaper.contract.ts';

runShaperContract('simulated', async () => {
  const links = new Set<string>();
  const kernel = new SimulatedTc();
  const made: SimulatedShaper[] = [];
  const build = () => {
    const shaper = new SimulatedShaper({ kernel, interfaceExists: (name) => links.has(name) });
    made.push(shaper);
    return shaper;
  };
  const shaper = build();
  return {
    shaper,
    makeInterface: async () => {
      const name = `vs${randomInt(100000, 1000000)}`;
      links.add(name);
      return name;
    },
    restart: build,
    writes: () => made.reduce((n, s) => n + s.stats().objectChanges + s.stats().rebuilds, 0),
    cleanup: async () => undefined,
  };
});

describe('SimulatedShaper hooks', () => {
  it('counts objects changed: O(1) per peer change, none for a right state', async () => {
    const shaper = new SimulatedShaper();
    const target = { name: 'wg1', address: '10.5.0.1/16' };
    const peers = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, ipv4: `10.5.${(i + 1) >> 8}.${(i + 1) & 255}`, ipv6: null, downloadMbit: 5, uploadMbit: 5 }));
    await shaper.ensure(target, peers);
    assert.deepEqual(shaper.stats(), { ensureCalls: 1, applyCalls: 0, rebuilds: 1, objectChanges: 4000 });
    await shaper.ensure(target, peers);
    assert.equal(shaper.stats().objectChanges, 4000);
    await shaper.apply(target, { upsert: [{ ...peers[7], downloadMbit: 6 }], remove: ['k8'] });
    assert.equal(shaper.stats().objectChanges, 4000 + 1 + 4);
    await shaper.ensure({ ...target, address: '10.5.0.1/17' }, peers);
    assert.equal(shaper.stats().rebuilds, 2, 'a new subnet rebuilds');
  });
});
