// The one Clock shape both halves read time through (pure, no imports); tests inject a fixed or stepping clock.

/** Time source: `now()` is the current instant. */
export interface Clock {
  now(): Date;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock standing at `start` that moves only when `advance(ms)` is called (tests). */
export function manualClock(start: Date = new Date(0)): Clock & { advance(ms: number): void; set(at: Date): void } {
  let at = start.getTime();
  return {
    now: () => new Date(at),
    advance: (ms) => {
      at += ms;
    },
    set: (date) => {
      at = date.getTime();
    },
  };
}
