// The module settings page (Payment and Notification modules): what the platform hands getSettingsPage(data), the
// optional test a module offers ("test the keys", "send a test mail"), and the permission key that guards both.
import type { ModuleResponse } from './http.ts';

/** What the platform's module settings page gives `getSettingsPage(data)`; the module renders the whole form. */
export interface SettingsPageData {
  /** Where the form posts (fields named as the module_data members, plus `label` and `_csrf`). */
  action: string;
  /** Where the module's test form posts; null before the instance exists. */
  test_action: string | null;
  /** The CSRF token for the forms' `_csrf` field. */
  csrf: string;
  /** The platform's base URL as the admin reached it: webhook URLs are built on it. */
  base_url: string;
  /** The instance's label (gateway or channel name). */
  label: string;
  /** Current (or just submitted) settings without secret members. */
  values: Record<string, unknown>;
  /** Secret members that hold a value: shown as set, never shown back; a blank field keeps them. */
  secrets_set: string[];
  /** Per-field messages of a save the module's validation refused (`_` for the form as a whole). */
  errors: Record<string, string[]>;
  /** Outcome of the last test, shown once. */
  test_result: SettingsTestResult | null;
}

/** What a module's settings test answers. */
export interface SettingsTestResult {
  ok: boolean;
  /** Shown to the admin; never a secret. */
  message: string;
}

/** A module whose settings page offers a test (the instance bound with its opened settings). */
export interface SettingsTestable {
  testSettings(input: Record<string, unknown>): Promise<SettingsTestResult>;
}

/** The permission key of a module's settings page: `<Type>-<ModuleName>-settings` (declared by its adminPermissions()). */
export function settingsPermission(type: string, name: string): string {
  return `${type}-${name}-settings`;
}

/** The admin sidebar entry, web route and permission a settings-page module declares (the link redirects to the page). */
export function settingsSurface(type: string, name: string, title: string): {
  permission: { name: string; key: string; description: string };
  route: { method: 'get'; uri: string; permission: string; name: string; controller: string };
  sidebar: { title: string; link: string; active_links: string[]; permission: string };
  /** The sidebar link's answer: a redirect to the platform's settings page of the module. */
  redirect: ModuleResponse;
} {
  const key = settingsPermission(type, name);
  const routeName = `${name.toLowerCase()}.settings`;
  return {
    permission: { name: `${title} settings`, key, description: `See and change the ${title} settings (secrets are only replaced, never shown)` },
    route: { method: 'get', uri: 'settings', permission: key, name: routeName, controller: `${name}@settingsLink` },
    sidebar: { title: 'Settings', link: routeName, active_links: [routeName], permission: key },
    redirect: { status: 303, body: '', headers: { location: settingsPagePath(type, name), 'content-type': 'text/plain; charset=utf-8' } },
  };
}

/** Path of the platform's settings pages of a module. */
function settingsPagePath(type: string, name: string): string {
  return `/admin/module-settings?module=${encodeURIComponent(`${type}/${name}`)}`;
}
