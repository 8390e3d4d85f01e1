// The panel's SystemConfig (statistics frequency/history, handshake uptime), stored in settings with defaults.
import { type Clock, systemClock } from '../../shared/clock.ts';
import { SYSTEM_CONFIG_DEFAULTS, type SystemConfig, type SystemConfigUpdate } from '../../shared/wire/system.ts';
import type { SettingsRepository } from '../store/repositories/settings.ts';

const KEY = 'system_config';

/** Reads, changes and resets the system configuration. */
export class SystemConfigService {
  constructor(
    private readonly settings: SettingsRepository,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The current configuration (defaults for anything never set). */
  get(): SystemConfig {
    const stored = this.settings.get<Partial<SystemConfig>>(KEY) ?? {};
    const out = { ...SYSTEM_CONFIG_DEFAULTS };
    for (const name of Object.keys(out) as Array<keyof SystemConfig>) {
      const value = stored[name];
      if (typeof value === 'number' && Number.isSafeInteger(value)) out[name] = value;
    }
    return out;
  }

  /** Applies the given fields (already validated) and returns the whole configuration. */
  update(change: SystemConfigUpdate): SystemConfig {
    const next = { ...this.get() };
    for (const name of Object.keys(next) as Array<keyof SystemConfig>) {
      const value = change[name];
      if (value !== undefined) next[name] = value;
    }
    this.settings.set(KEY, next, this.clock.now());
    return next;
  }

  /** Restores 5 / 2 / 180 and returns them. */
  reset(): SystemConfig {
    const next = { ...SYSTEM_CONFIG_DEFAULTS };
    this.settings.set(KEY, next, this.clock.now());
    return next;
  }
}
