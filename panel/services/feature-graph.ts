// A graph of feature plugins: each declares what it needs and provides; the build order is derived, never written.

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

/**
 * Builds every feature in derived order on top of `seed` and answers the registry. While a feature builds, `get`
 * refuses keys it did not declare (so declarations stay true), and its result must hold exactly its `provides`.
 */
export function composeFeatures<R>(features: readonly Feature<R>[], seed: Partial<R>): R {
  const registry = { ...seed } as Record<string, unknown>;
  for (const f of orderFeatures(features, Object.keys(seed))) {
    const allowed = new Set<string>(f.needs);
    const get = <K extends keyof R>(key: K): R[K] => {
      if (!allowed.has(key as string)) throw new FeatureGraphError(`feature "${f.name}" used "${String(key)}" without declaring it in needs`);
      return registry[key as string] as R[K];
    };
    const out = f.build(get) as Record<string, unknown>;
    const keys = Object.keys(out).sort();
    const declared = [...f.provides].sort();
    if (keys.join() !== declared.join()) throw new FeatureGraphError(`feature "${f.name}" provided [${keys.join(', ')}], declared [${declared.join(', ')}]`);
    Object.assign(registry, out);
  }
  return registry as R;
}
