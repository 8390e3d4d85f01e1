// Every store contract suite: `store.contract.ts` (the core repositories and the query layer) and each area's
// `store-<area>.contract.ts` beside it, found by name so that an area adds its suite without touching this file. Each
// suite module exports `runStoreContract(engine, open)`; store-sqlite.test.ts and store-postgres.test.ts run them all.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { QueryStore } from '../../module/platform/store/query/query-store.ts';
import type { OpenStore } from './store.contract.ts';

type Suite = (engine: string, open: OpenStore) => void;

const here = dirname(fileURLToPath(import.meta.url));
// `.ts` from the sources, `.js` in the compiled tree the runner uses
const files = readdirSync(here).filter((name) => /^store(-[a-z-]+)?\.contract\.(ts|js)$/.test(name)).sort();

/** The suites, in file-name order. */
export const STORE_CONTRACT_SUITES: Array<{ file: string; run: Suite }> = await Promise.all(files.map(async (file) => {
  const suite = await import(join(here, file)) as { runStoreContract?: Suite };
  if (typeof suite.runStoreContract !== 'function') throw new Error(`${file} exports no runStoreContract(engine, open)`);
  return { file, run: suite.runStoreContract };
}));

/** Runs every suite on one engine. */
export function runStoreContracts(engine: string, open: OpenStore): void {
  for (const { run } of STORE_CONTRACT_SUITES) run(engine, open);
}

/**
 * What an engine's OpenStore answers: `store`, `another()` opening more stores on the same database through `reopen`
 * (as further platform processes would), and `close` closing them all, then running `cleanup`.
 */
export function openedStores(store: QueryStore, reopen: () => Promise<QueryStore>, cleanup: () => void = () => undefined) {
  const others: QueryStore[] = [];
  return {
    store,
    async another() {
      const other = await reopen();
      others.push(other);
      return other;
    },
    async close() {
      for (const other of others) await other.close();
      await store.close();
      cleanup();
    },
  };
}
