// Turns a module's 422 error bag into per-field messages for a form, and form fields into the module's input.
import { HttpError } from '../../errors.ts';

export interface FormField {
  name: string;
  label: string;
  value: string;
  errors: string[];
}

/** The error bag of a 422 HttpError (`extra.errors`), or null for any other error. */
export function errorBagOf(error: unknown): Record<string, string[]> | null {
  if (!(error instanceof HttpError) || error.statusCode !== 422) return null;
  const bag = error.extra.errors;
  return bag && typeof bag === 'object' ? (bag as Record<string, string[]>) : { _: [error.message] };
}

/** Form fields of `names` with their values and the bag's messages. */
export function formFields(names: readonly string[], values: Record<string, unknown>, bag: Record<string, string[]> | null): FormField[] {
  return names.map((name) => ({
    name,
    label: name.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase()),
    value: values[name] === null || values[name] === undefined ? '' : String(values[name]),
    errors: bag?.[name] ?? [],
  }));
}

/** Messages of the bag that belong to no listed field. */
export function otherErrors(names: readonly string[], bag: Record<string, string[]> | null): string[] {
  if (!bag) return [];
  return Object.entries(bag).filter(([key]) => !names.includes(key)).flatMap(([key, list]) => list.map((m) => (key === '_' ? m : `${key}: ${m}`)));
}

/** The submitted fields of a form body, without the CSRF token; empty strings kept (the module decides). */
export function formInput(body: unknown, names: readonly string[]): Record<string, unknown> {
  const form = (body ?? {}) as Record<string, unknown>;
  return Object.fromEntries(names.filter((n) => n in form).map((n) => [n, form[n]]));
}
