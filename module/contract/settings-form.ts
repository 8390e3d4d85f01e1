// The form data of a module settings page: each declared field with its current value (secrets never: only whether one
// is set), its messages from a refused save, and the form's own messages; the module's template lays it out.
import type { SettingsPageData, SettingsTestResult } from './settings-page.ts';

/** One field of a settings form (a module_data member). */
export interface SettingsField {
  name: string;
  label: string;
  type: 'text' | 'password' | 'url' | 'number' | 'email' | 'select' | 'textarea';
  /** Never shown back: rendered blank, "set" when it holds a value, kept when left blank. */
  secret: boolean;
  help?: string;
  options?: readonly string[];
}

export interface SettingsFormField extends SettingsField {
  value: string;
  set: boolean;
  errors: string[];
  options_list: Array<{ value: string; selected: boolean }>;
}

export interface SettingsForm {
  action: string;
  csrf: string;
  label: string;
  test_action: string | null;
  test_result: SettingsTestResult | null;
  fields: SettingsFormField[];
  /** Messages of the bag that belong to no field. */
  other_errors: string[];
}

/** The form of `fields` over the page data. */
export function settingsForm(data: SettingsPageData, fields: readonly SettingsField[]): SettingsForm {
  const names = fields.map((f) => f.name);
  return {
    action: data.action, csrf: data.csrf, label: data.label, test_action: data.test_action, test_result: data.test_result,
    fields: fields.map((field) => {
      const raw = data.values[field.name];
      const value = field.secret || raw === undefined || raw === null ? '' : String(raw);
      return {
        ...field, value, set: field.secret && data.secrets_set.includes(field.name), errors: data.errors[field.name] ?? [],
        options_list: (field.options ?? []).map((option) => ({ value: option, selected: option === value })),
      };
    }),
    other_errors: Object.entries(data.errors).filter(([key]) => !names.includes(key)).flatMap(([key, list]) => list.map((m) => (key === '_' ? m : `${key}: ${m}`))),
  };
}
