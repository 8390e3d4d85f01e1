// In-memory cache of expensive lookups with a TTL (300 s by default) and tags for invalidation.
import { systemClock, type Clock } from '../../shared/clock.ts';

/** Default lifetime of an entry, seconds (the spec's guidance). */
const DEFAULT_CACHE_TTL_SECONDS = 300;

interface Entry {
  value: unknown;
  expiresAt: number;
  tags: readonly string[];
}

export class ModuleCache {
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<unknown>>();
  readonly #now: () => number;

  constructor(clock: Clock = systemClock, readonly defaultTtlSeconds = DEFAULT_CACHE_TTL_SECONDS) {
    this.#now = () => clock.now().getTime();
  }

  /** The live value of `key`, or undefined (expired entries are dropped). */
  get<T>(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  set(key: string, value: unknown, opts: { ttlSeconds?: number; tags?: readonly string[] } = {}): void {
    const ttl = opts.ttlSeconds ?? this.defaultTtlSeconds;
    this.#entries.set(key, { value, expiresAt: this.#now() + ttl * 1000, tags: [...(opts.tags ?? [])] });
  }

  /** Cached value of `key`, else computes it once (concurrent callers share the computation) and stores it. */
  async remember<T>(key: string, tags: readonly string[], compute: () => T | Promise<T>, ttlSeconds?: number): Promise<T> {
    const hit = this.get<T>(key);
    if (hit !== undefined) return hit;
    const pending = this.#inFlight.get(key);
    if (pending) return pending as Promise<T>;
    const run = (async () => {
      try {
        const value = await compute();
        if (value !== undefined) this.set(key, value, { ttlSeconds, tags });
        return value;
      } finally {
        this.#inFlight.delete(key);
      }
    })();
    this.#inFlight.set(key, run);
    return run;
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Drops every entry carrying `tag`; returns how many. */
  invalidateTag(tag: string): number {
    let dropped = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.tags.includes(tag)) {
        this.#entries.delete(key);
        dropped += 1;
      }
    }
    return dropped;
  }

  clear(): void {
    this.#entries.clear();
  }

  get size(): number {
    return this.#entries.size;
  }
}
