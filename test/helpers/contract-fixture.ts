// The lazily built, gated fixture of a contract suite: built on the first test that passes the gate, torn down once.
import { after, type TestContext } from 'node:test';

/** What a suite uses: `ready(t)` (false when the gate skipped the test), then `fx()` for the built fixture. */
export interface LazyFixture<F> {
  ready(t: TestContext): Promise<boolean>;
  fx(): F;
}

/**
 * Call inside a `describe`: builds the fixture with `setup` on the first test whose `gate` passes (one fixture for
 * the whole suite) and runs `teardown` after the suite when it was built.
 */
export function lazyFixture<F>(setup: () => Promise<F>, teardown: (fx: F) => Promise<void>, gate?: (t: TestContext) => boolean): LazyFixture<F> {
  let building: Promise<F> | null = null;
  let built: F | undefined;
  after(async () => {
    const fx = building ? await building.catch(() => undefined) : undefined;
    if (fx !== undefined) await teardown(fx);
  });
  return {
    async ready(t) {
      if (gate && !gate(t)) return false;
      building ??= setup();
      built = await building;
      return true;
    },
    fx: () => built as F,
  };
}
