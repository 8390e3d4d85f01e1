// Contract of the `panel-directory` capability (module/contract/capabilities.ts) as VpnFleet and Smtp rely on it: the
// registered panels sorted by location then name without access hashes, read access to a registered panel, one-time
// links that never reject. Run on the real VpnProduct directory (its panel store on the platform's store) by
// store-modules.contract.ts on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { PanelDirectoryCapability } from '../../module/contract/capabilities.ts';

/** A directory under test and how to register a panel in it (its provider's own registration). */
export interface DirectoryUnderTest {
  directory: PanelDirectoryCapability;
  register(panel: { name?: string; location: string; api_url: string; access_hash: string }): Promise<void>;
  close(): Promise<void>;
}

export type OpenDirectory = (t: TestContext) => Promise<DirectoryUnderTest | null>;

async function withDirectory(t: TestContext, open: OpenDirectory, body: (d: DirectoryUnderTest) => Promise<void>): Promise<void> {
  const opened = await open(t);
  if (!opened) return;
  try {
    await body(opened);
  } finally {
    await opened.close();
  }
}

/** The contract, once per implementation / engine. */
export function runPanelDirectoryContract(name: string, open: OpenDirectory): void {
  test(`panel-directory (${name}): panels sorted by location then name, no access hash; re-registering a name replaces it`, (t) => withDirectory(t, open, async ({ directory, register }) => {
    assert.deepEqual(await directory.panels(), []);
    await register({ location: 'fra', api_url: 'http://127.0.0.1:9/fra', access_hash: 'f'.repeat(80) });
    await register({ name: 'ams-2', location: 'ams', api_url: 'http://127.0.0.1:9/ams2', access_hash: 'b'.repeat(80) });
    await register({ name: 'ams-1', location: 'ams', api_url: 'http://127.0.0.1:9/ams1', access_hash: 'a'.repeat(80) });
    await register({ name: 'ams-2', location: 'ams', api_url: 'http://127.0.0.1:9/ams2-new', access_hash: 'c'.repeat(80) });
    const panels = await directory.panels();
    assert.deepEqual(panels, [
      { name: 'ams-1', location: 'ams', api_url: 'http://127.0.0.1:9/ams1' },
      { name: 'ams-2', location: 'ams', api_url: 'http://127.0.0.1:9/ams2-new' },
      { name: 'fra', location: 'fra', api_url: 'http://127.0.0.1:9/fra' },
    ]);
    assert.equal(JSON.stringify(panels).includes('a'.repeat(80)), false, 'no access hash leaves the provider');
  }));

  test(`panel-directory (${name}): a reader of a registered panel; an unknown one rejects`, (t) => withDirectory(t, open, async ({ directory, register }) => {
    await register({ location: 'ams', api_url: 'http://127.0.0.1:9', access_hash: 'a'.repeat(80) });
    const reader = await directory.reader('ams');
    assert.equal(typeof reader.systemStatus, 'function');
    await assert.rejects(directory.reader('nowhere'), /no panel registered/);
  }));

  test(`panel-directory (${name}): a one-time link never rejects: an unknown or unreachable panel answers the reason`, (t) => withDirectory(t, open, async ({ directory, register }) => {
    const unknown = await directory.oneTimeLink('nowhere', 'alice');
    assert.equal(unknown.url, null);
    assert.match((unknown as { reason: string }).reason, /no panel registered/);
    await register({ location: 'ams', api_url: 'http://127.0.0.1:9', access_hash: 'a'.repeat(80) });
    const down = await directory.oneTimeLink('ams', 'alice', AbortSignal.timeout(5_000));
    assert.equal(down.url, null);
    assert.equal(typeof (down as { reason: string }).reason, 'string');
  }));
}
