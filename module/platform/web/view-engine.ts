// The handlebars instance of the web host's pages: HTML-escaping by default, a few small helpers.
import Handlebars from 'handlebars';
import { registerTimeHelper } from '../../contract/time-format.ts';

/** A fresh handlebars environment with the helpers the platform templates use. */
export function createViewEngine(): typeof Handlebars {
  const hbs = Handlebars.create();
  hbs.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  hbs.registerHelper('json', (value: unknown) => JSON.stringify(value ?? null, null, 2));
  hbs.registerHelper('includes', (list: unknown, value: unknown) => Array.isArray(list) && list.includes(value));
  hbs.registerHelper('or', (...args: unknown[]) => args.slice(0, -1).some(Boolean));
  registerTimeHelper(hbs);
  return hbs;
}
