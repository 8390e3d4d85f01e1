// The list of interfaces this panel created (a JSON file), so reconcile never removes an interface it did not make.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** How a managed interface is implemented. */
export type WireguardMode = 'kernel' | 'userspace';

interface StateFile {
  version: 1;
  interfaces: Record<string, { mode: WireguardMode }>;
}

/** File name inside the state directory. */
const MANAGED_STATE_FILE = 'dataplane-interfaces.json';

/** Reads and writes `<stateDir>/dataplane-interfaces.json` (written atomically: temp file + rename). */
export class ManagedState {
  private cache: StateFile | null = null;
  private readonly path: string;

  constructor(private readonly stateDir: string) {
    this.path = join(stateDir, MANAGED_STATE_FILE);
  }

  /** Managed interface names with their mode. */
  async all(): Promise<Record<string, { mode: WireguardMode }>> {
    return { ...(await this.load()).interfaces };
  }

  /** Mode of a managed interface, or null when it is not managed. */
  async mode(name: string): Promise<WireguardMode | null> {
    return (await this.load()).interfaces[name]?.mode ?? null;
  }

  /** Records an interface as managed. */
  async add(name: string, mode: WireguardMode): Promise<void> {
    const state = await this.load();
    if (state.interfaces[name]?.mode === mode) return;
    state.interfaces[name] = { mode };
    await this.save(state);
  }

  /** Forgets interfaces (after removal, or when they no longer exist). */
  async remove(...names: string[]): Promise<void> {
    const state = await this.load();
    const present = names.filter((name) => name in state.interfaces);
    if (present.length === 0) return;
    for (const name of present) delete state.interfaces[name];
    await this.save(state);
  }

  private async load(): Promise<StateFile> {
    if (this.cache) return this.cache;
    try {
      const parsed = JSON.parse(await readFile(this.path, 'utf8')) as Partial<StateFile>;
      this.cache = { version: 1, interfaces: parsed.interfaces ?? {} };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      this.cache = { version: 1, interfaces: {} };
    }
    return this.cache;
  }

  private async save(state: StateFile): Promise<void> {
    await mkdir(this.stateDir, { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    await writeFile(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    await rename(tmp, this.path);
  }
}
