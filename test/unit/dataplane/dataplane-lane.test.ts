// The data-plane lane: serial tasks, group commit of parked changes, and the per-change rerun of a failed batch.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DataplaneLane } from '../../../panel/services/dataplane-lane.ts';

/** A lane over a fake store (a list) whose flush records each batch and can be told to fail. */
function fixture(fail: (changes: string[]) => boolean = () => false) {
  const flushes: string[][] = [];
  const store: string[] = [];
  const log: string[] = [];
  const flush = async (changes: string[]) => {
    flushes.push([...changes]);
    await new Promise((r) => setImmediate(r));
    if (fail(changes)) throw new Error(`flush of ${changes.join(',')} failed`);
  };
  const lane = new DataplaneLane<string>(flush);
  /** An account-like task: write the row, park the change (or apply it alone), undo the row on failure. */
  const change = (name: string) =>
    lane.run(async () => {
      await new Promise((r) => setImmediate(r));
      store.push(name);
      log.push(`write ${name}`);
      try {
        await (lane.park(name) ?? flush([name]));
      } catch (err) {
        store.splice(store.indexOf(name), 1);
        log.push(`undo ${name}`);
        throw err;
      }
      log.push(`answer ${name}`);
      return name;
    }, { batch: true });
  return { lane, flushes, store, log, change };
}

describe('DataplaneLane', () => {
  it('runs plain tasks one after the other, in order', async () => {
    const { lane } = fixture();
    const seen: number[] = [];
    await Promise.all([1, 2, 3].map((n) => lane.run(async () => {
      seen.push(n);
      await new Promise((r) => setTimeout(r, 3 - n));
      seen.push(-n);
    })));
    assert.deepEqual(seen, [1, -1, 2, -2, 3, -3]);
  });

  it('commits changes queued together as one flush; each answers after it, store writes stay in order', async () => {
    const { flushes, store, log, change } = fixture();
    const answers = await Promise.all(['a', 'b', 'c'].map(change));
    assert.deepEqual(answers, ['a', 'b', 'c']);
    assert.deepEqual(flushes, [['a', 'b', 'c']]);
    assert.deepEqual(store, ['a', 'b', 'c']);
    assert.deepEqual(log, ['write a', 'write b', 'write c', 'answer a', 'answer b', 'answer c']);
  });

  it('a plain task queued between changes ends the batch: it never interleaves with one', async () => {
    const { lane, flushes, log, change } = fixture();
    await Promise.all([change('a'), change('b'), lane.run(() => log.push('plain')), change('c')]);
    assert.deepEqual(flushes, [['a', 'b'], ['c']]);
    assert.deepEqual(log, ['write a', 'write b', 'answer a', 'answer b', 'plain', 'write c', 'answer c']);
  });

  it('caps a batch at its size', async () => {
    const flushes: number[] = [];
    const lane = new DataplaneLane<number>(async (changes) => void flushes.push(changes.length), 2);
    await Promise.all([1, 2, 3, 4, 5].map((n) => lane.run(() => lane.park(n), { batch: true })));
    assert.deepEqual(flushes, [2, 2, 1]);
  });

  it('a failed batch is undone in reverse order and rerun change by change: only the bad one fails', async () => {
    const { flushes, store, log, change } = fixture((changes) => changes.includes('b'));
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map(change));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(String((outcomes[1] as PromiseRejectedResult).reason), /flush of b failed/);
    assert.deepEqual(flushes, [['a', 'b', 'c'], ['a'], ['b'], ['c']]);
    assert.deepEqual(store, ['a', 'c']);
    assert.deepEqual(log.slice(0, 6), ['write a', 'write b', 'write c', 'undo c', 'undo b', 'undo a']);
  });

  it('a batch of one gets its own error, without a rerun', async () => {
    const { flushes, store, change } = fixture(() => true);
    await assert.rejects(change('x'), /flush of x failed/);
    assert.deepEqual(flushes, [['x']]);
    assert.deepEqual(store, []);
  });

  it('a task that fails or finishes before parking keeps its own outcome and joins no flush', async () => {
    const { lane, flushes, change } = fixture();
    const refused = lane.run(async () => {
      throw new Error('refused');
    }, { batch: true });
    const noop = lane.run(() => 'nothing to apply', { batch: true });
    const [, second, third] = await Promise.allSettled([refused, noop, change('a')]);
    await assert.rejects(refused, /refused/);
    assert.deepEqual([second, third], [{ status: 'fulfilled', value: 'nothing to apply' }, { status: 'fulfilled', value: 'a' }]);
    assert.deepEqual(flushes, [['a']]);
  });

  it('outside a batch task park() is null: the caller applies the change itself', async () => {
    const { lane } = fixture();
    assert.equal(lane.park('x'), null);
    assert.equal(await lane.run(() => lane.park('y')), null);
  });
});
