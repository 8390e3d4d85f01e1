// Follows module switches another process recorded (`vpnhost platform module activate|deactivate`, or another
// platform process on the same store) through the store's switch version: cheap when nothing changed (one read).
import type { Logger } from 'pino';
import type { ModuleLoader } from '../loader.ts';

export type ModuleSwitch = { type: string; name: string; active: boolean; error?: string };

/** One per platform process: `follow()` on demand, or every `everyMs` once started; `stop()` waits for a running look. */
export class ModuleSwitchWatch {
  private following: Promise<unknown> = Promise.resolve();
  /** The store's module switch version at the last look (it moves with every switch any process records). */
  private version: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly deps: { modules: ModuleLoader; logger: Logger }) {}

  /** Reads the switch version now (what is already applied) and, with `everyMs` > 0, looks again every `everyMs`. */
  async start(everyMs: number): Promise<void> {
    this.version = await this.deps.modules.switchVersion();
    if (everyMs <= 0) return;
    this.timer = setInterval(() => {
      this.follow().catch((error: unknown) => this.deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'module switch check failed'));
    }, everyMs);
    this.timer.unref();
  }

  /**
   * Applies the switches recorded since the last look. Switches made through this process's admin API are applied at
   * once; the look after them finds nothing to do.
   */
  follow(): Promise<ModuleSwitch[]> {
    const next = this.following.then(async () => {
      if (this.stopped) return [];
      const version = await this.deps.modules.switchVersion();
      if (version === this.version) return [];
      this.version = version;
      const changed = await this.deps.modules.follow();
      for (const c of changed) {
        if (c.error) this.deps.logger.error({ module: `${c.type}/${c.name}`, err: c.error }, 'module switched on by another process failed to mount here');
        else this.deps.logger.info({ module: `${c.type}/${c.name}`, active: c.active }, 'module switch made by another process applied');
      }
      return changed;
    });
    this.following = next.catch(() => undefined);
    return next;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.following;
  }
}
