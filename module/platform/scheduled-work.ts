// The modules' scheduled work (manifest `scheduled`), run by the serving platform processes: every tick (slot
// `floor(now / everyMs)`) is claimed in the module host's `scheduled_slots` first, so one process of several runs it.
import type { Clock } from '../../shared/clock.ts';
import type { ModuleLoader } from './loader.ts';
import type { ModuleStateStore } from './services/module-store.ts';

export interface ScheduledWorkDeps {
  modules: Pick<ModuleLoader, 'mounted' | 'has'>;
  /** Where ticks are claimed; null runs every tick here (a single process without the host's tables). */
  states: Pick<ModuleStateStore, 'claimSlot'> | null;
  clock: Clock;
  onError: (work: string, error: unknown) => void;
}

/** Starts a timer per scheduled work of every mounted module; the answer stops them all. */
export function startScheduledWork(deps: ScheduledWorkDeps): { stop(): void } {
  const timers: NodeJS.Timeout[] = [];
  for (const { type, name, manifest, ext } of deps.modules.mounted()) {
    for (const work of manifest.scheduled ?? []) {
      let running = false;
      const key = `${type}/${name}:${work.name}`;
      const claimed = async () => !deps.states || deps.states.claimSlot(key, Math.floor(deps.clock.now().getTime() / work.everyMs));
      const timer = setInterval(() => {
        if (running || !deps.modules.has(type, name)) return;
        running = true;
        claimed().then((won) => (won ? work.run(ext) : undefined)).catch((error: unknown) => deps.onError(key, error)).finally(() => {
          running = false;
        });
      }, work.everyMs);
      timer.unref();
      timers.push(timer);
    }
  }
  return {
    stop() {
      for (const timer of timers.splice(0)) clearInterval(timer);
    },
  };
}
