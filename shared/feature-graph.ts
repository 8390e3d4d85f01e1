// A graph of feature plugins (the panel's services, the platform's process): each declares what it needs and provides;
// the build order is derived, never written. Live features also start and stop (in reverse order).

/**
 * One feature of a composition: `build` gets only what `needs` names (through `get`) and returns exactly what
 * `provides` names. A feature that provides nothing (wiring between others) still runs, after what it needs.
 */
export interface Feature<R> {
  readonly name: string;
  readonly needs: readonly (keyof R & string)[];
  readonly provides: readonly (keyof R & string)[];
  build(get: <K extends keyof R>(key: K) => R[K]): Partial<R>;
}

/** A composition that cannot be built: a need nobody provides, a thing provided twice, a cycle, a lying feature. */
export class FeatureGraphError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGraphError';
  }
}

/**
 * The feature declarer for registry `R`, with checked types: `get` accepts only the keys listed in `needs`, and
 * `build` must return every key of `provides`. `const define = featureFor<MyRegistry>();`
 */
export function featureFor<R>() {
  return <N extends keyof R & string, P extends keyof R & string>(feature: {
    name: string;
    needs: readonly N[];
    provides: readonly P[];
    build(get: <K extends N>(key: K) => R[K]): Pick<R, P>;
  }): Feature<R> => feature as unknown as Feature<R>;
}

/**
 * The features in build order: each after the providers of everything it needs (Kahn's algorithm, stable: among
 * features ready together, the listed order is kept). Throws {@link FeatureGraphError} naming the missing need and
 * who needs it, the key provided twice, or the features of a cycle.
 */
export function orderFeatures<R>(features: readonly Feature<R>[], seeded: readonly string[] = []): Feature<R>[] {
  const provider = new Map<string, string>(seeded.map((key) => [key, '(seed)']));
  for (const f of features) {
    for (const key of f.provides) {
      const other = provider.get(key);
      if (other) throw new FeatureGraphError(`"${key}" is provided by both ${other === '(seed)' ? 'the seed' : `feature "${other}"`} and feature "${f.name}"`);
      provider.set(key, f.name);
    }
  }
  for (const f of features) {
    const missing = f.needs.find((key) => !provider.has(key));
    if (missing) throw new FeatureGraphError(`feature "${f.name}" needs "${missing}", which no feature provides`);
  }
  const byName = new Map(features.map((f) => [f.name, f]));
  const waitsOn = new Map(features.map((f) => [f.name, new Set(f.needs.map((key) => provider.get(key)!).filter((p) => p !== '(seed)' && p !== f.name))]));
  const ordered: Feature<R>[] = [];
  const done = new Set<string>();
  while (ordered.length < features.length) {
    const next = features.find((f) => !done.has(f.name) && [...waitsOn.get(f.name)!].every((p) => done.has(p)));
    if (!next) {
      const stuck = features.filter((f) => !done.has(f.name)).map((f) => f.name);
      throw new FeatureGraphError(`features needing each other (a cycle): ${stuck.join(', ')}`);
    }
    done.add(next.name);
    ordered.push(byName.get(next.name)!);
  }
  return ordered;
}

/** `get` for feature `f` over `registry`: refuses keys `f` did not declare in its needs (so declarations stay true). */
function getterFor<R>(f: { name: string; needs: readonly string[] }, registry: Record<string, unknown>) {
  const allowed = new Set<string>(f.needs);
  return <K extends keyof R>(key: K): R[K] => {
    if (!allowed.has(key as string)) throw new FeatureGraphError(`feature "${f.name}" used "${String(key)}" without declaring it in needs`);
    return registry[key as string] as R[K];
  };
}

/** Checks that `out` holds exactly what `f` declared in its provides. */
function checkProvided(f: { name: string; provides: readonly string[] }, out: object): void {
  const keys = Object.keys(out).sort();
  const declared = [...f.provides].sort();
  if (keys.join() !== declared.join()) throw new FeatureGraphError(`feature "${f.name}" provided [${keys.join(', ')}], declared [${declared.join(', ')}]`);
}

/**
 * Builds every feature in derived order on top of `seed` and answers the registry. While a feature builds, `get`
 * refuses keys it did not declare (so declarations stay true), and its result must hold exactly its `provides`.
 */
export function composeFeatures<R>(features: readonly Feature<R>[], seed: Partial<R>): R {
  const registry = { ...seed } as Record<string, unknown>;
  for (const f of orderFeatures(features, Object.keys(seed))) {
    const out = f.build(getterFor<R>(f, registry)) as Record<string, unknown>;
    checkProvided(f, out);
    Object.assign(registry, out);
  }
  return registry as R;
}

/** What a starting feature gets besides `get`: a place to say how it stops (stops run in reverse start order). */
export interface FeatureLife<S> {
  onStop(stop: (arg: S) => unknown): void;
}

/**
 * A feature with a life (a process part: a store to close, a timer to clear): `start` may be asynchronous and may
 * register stops. Ordered like a {@link Feature}: after the providers of everything it needs.
 */
export interface LiveFeature<R, S = void> {
  readonly name: string;
  readonly needs: readonly (keyof R & string)[];
  readonly provides: readonly (keyof R & string)[];
  start(get: <K extends keyof R>(key: K) => R[K], life: FeatureLife<S>): Partial<R> | Promise<Partial<R>>;
}

/** The declarer of live features for registry `R` (stop argument `S`), with the same checked types as {@link featureFor}. */
export function liveFeatureFor<R, S = void>() {
  return <N extends keyof R & string, P extends keyof R & string>(feature: {
    name: string;
    needs: readonly N[];
    provides: readonly P[];
    start(get: <K extends N>(key: K) => R[K], life: FeatureLife<S>): Pick<R, P> | Promise<Pick<R, P>>;
  }): LiveFeature<R, S> => feature as unknown as LiveFeature<R, S>;
}

/**
 * A started graph of live features: what they provide (read with `get`), and their stops, run in reverse start order
 * by `stop`. `extend` starts more features on top (a process's job slots, its scheduled work), ordered among
 * themselves with everything already running as their seed; they stop first.
 */
export class RunningGraph<R, S = void> {
  private readonly registry: Record<string, unknown>;
  private readonly stops: Array<{ name: string; stop: (arg: S) => unknown }> = [];
  private readonly started: string[] = [];
  private stopping: Promise<void> | null = null;

  private constructor(seed: Partial<R>) {
    this.registry = { ...seed } as Record<string, unknown>;
  }

  /**
   * Starts `features` over `seed` in derived order. A missing need, a cycle or a failed start stops what had started
   * (with `abort`) and throws: a {@link FeatureGraphError} naming the need or the cycle, or the start's own error.
   */
  static async start<R, S = void>(features: readonly LiveFeature<R, S>[], seed: Partial<R>, abort: S): Promise<RunningGraph<R, S>> {
    const graph = new RunningGraph<R, S>(seed);
    await graph.extend(features, abort);
    return graph;
  }

  /** The names of the started features, in start order. */
  get order(): readonly string[] {
    return this.started;
  }

  /** What the graph provides under `key`; a key nothing provided is a {@link FeatureGraphError} naming it. */
  get<K extends keyof R & string>(key: K): R[K] {
    if (!(key in this.registry)) throw new FeatureGraphError(`"${key}" is not provided by any running feature`);
    return this.registry[key] as R[K];
  }

  /** Whether a running feature (or the seed) provides `key`. */
  has(key: keyof R & string): boolean {
    return key in this.registry;
  }

  /** Everything provided so far (the seed of a graph built on top of this one, e.g. the HTTP routes'). */
  snapshot(): Readonly<Partial<R>> {
    return { ...this.registry } as Partial<R>;
  }

  /**
   * Starts more features on top of what runs (with `seed` added, e.g. a part's settings); on failure, stops everything
   * started (with `abort`) and rethrows.
   */
  async extend(features: readonly LiveFeature<R, S>[], abort: S, seed: Partial<R> = {}): Promise<void> {
    if (this.stopping) throw new FeatureGraphError('the graph is stopped');
    Object.assign(this.registry, seed);
    try {
      for (const f of orderFeatures(features as unknown as Feature<R>[], Object.keys(this.registry)) as unknown as LiveFeature<R, S>[]) {
        const life: FeatureLife<S> = { onStop: (stop) => void this.stops.push({ name: f.name, stop }) };
        const out = (await f.start(getterFor<R>(f, this.registry), life)) as Record<string, unknown>;
        checkProvided(f, out);
        Object.assign(this.registry, out);
        this.started.push(f.name);
      }
    } catch (error) {
      await this.stop(abort).catch(() => undefined);
      throw error;
    }
  }

  /** Runs every stop once, last started first; a failing stop does not keep the others from running (its error is thrown after). */
  stop(arg: S): Promise<void> {
    this.stopping ??= (async () => {
      let failure: unknown = null;
      for (const { stop } of this.stops.splice(0).reverse()) {
        try {
          await stop(arg);
        } catch (error) {
          failure ??= error;
        }
      }
      if (failure) throw failure;
    })();
    return this.stopping;
  }
}
