// Shared setup of the fleet tests: a stack (its panel registered at `ams`) plus a second real panel process with the
// given servers, not yet registered; close() stops both and removes their data.
import { admin, type JsonAnswer } from '../../fixtures/platform/http.ts';
import { removeDir, startPanel, type PanelProcess } from '../../fixtures/platform/processes.ts';
import { createServer, registerPanel, startStack, type Stack } from '../../fixtures/platform/setup.ts';

export interface TwoPanels {
  stack: Stack;
  second: PanelProcess;
  /** The admin API with the stack's token. */
  api(method: string, path: string, body?: unknown): Promise<JsonAnswer<any>>;
  close(): Promise<void>;
}

/** Starts the stack and a second panel with `servers` (name, address); stops whatever started if a step fails. */
export async function startTwoPanels(servers: Array<[name: string, address: string]>): Promise<TwoPanels> {
  const stack = await startStack();
  let second: PanelProcess | null = null;
  const close = async () => {
    await stack.close();
    if (second) {
      await second.stop();
      removeDir(second.dataDir);
    }
  };
  try {
    second = await startPanel();
    for (const [name, address] of servers) await createServer(second, name, address);
    await registerPanel(stack, 'ams');
  } catch (error) {
    await close();
    throw error;
  }
  return { stack, second, api: (method, path, body) => admin(stack.platform.url, stack.token, method, path, body), close };
}
