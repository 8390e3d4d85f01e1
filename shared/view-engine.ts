// The one handlebars engine of the tree (platform pages, module views, mail messages, one-time-link pages): a fresh
// environment with one set of helpers, and the compile options every template is compiled with.
import Handlebars from 'handlebars';
import { registerTimeHelper } from './time-format.ts';

/** The helpers every engine has: `eq`, `json` (compact), `includes`, `or`, `time` (see time-format.ts). */
const HELPERS = {
  eq: (a: unknown, b: unknown) => a === b,
  json: (value: unknown) => JSON.stringify(value ?? null),
  includes: (list: unknown, value: unknown) => Array.isArray(list) && list.includes(value),
  or: (...args: unknown[]) => args.slice(0, -1).some(Boolean),
};

/**
 * Compile options of every template: the helpers are declared known, so `{{name}}` of a helper compiles to a direct
 * call and a plain `{{field}}` to a plain lookup (no per-mustache "is this a helper?" test at render time).
 */
export const COMPILE_OPTIONS: CompileOptions = Object.freeze({
  strict: false,
  knownHelpers: { eq: true, json: true, includes: true, or: true, time: true },
});

/** What `Handlebars.compile` takes (its options type is not exported by name from the ESM entry). */
export type CompileOptions = NonNullable<Parameters<typeof Handlebars.compile>[1]>;

/** A fresh handlebars environment with the helpers; partials are the caller's. */
export function createViewEngine(): typeof Handlebars {
  const hbs = Handlebars.create();
  for (const [name, helper] of Object.entries(HELPERS)) hbs.registerHelper(name, helper);
  registerTimeHelper(hbs);
  return hbs;
}
