// Module settings pages: the Payment gateways and Notification channels of every loaded module, each rendered by its
// module's getSettingsPage() inside the admin layout. Saving goes through the module's own validation (getModuleData)
// with each field's errors; a secret is never shown back and a blank secret field keeps it; the module's test ("test
// the keys", "send a test mail") runs on the saved settings. Guarded by the module's `<Type>-<Name>-settings` key.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Module } from '../../../contract/module.ts';
import type { ModuleType } from '../../../contract/platform-context.ts';
import { SECRET_KEY_PATTERN } from '../../../contract/redact.ts';
import { settingsPermission, type SettingsPageData, type SettingsTestable, type SettingsTestResult } from '../../../contract/settings-page.ts';
import { HttpError, INSUFFICIENT_PERMISSIONS } from '../../errors.ts';
import { adminPage, csrfToken, flash, type FlashDeps, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

const TYPES = ['Payment', 'Notification'] as const;
type InstanceType = (typeof TYPES)[number];
const ROOT = '/admin/module-settings';

interface SettingsModule extends Module {
  getSettingsPage?(data: Partial<SettingsPageData>): string | Promise<string>;
}

/** The loaded Payment and Notification modules the admin may configure. */
function configurable(deps: ModuleSettingsPageDeps, request: FastifyRequest): Array<{ type: InstanceType; name: string }> {
  return deps.modules.mounted()
    .filter((m): m is typeof m & { type: InstanceType } => (TYPES as readonly string[]).includes(m.type))
    .filter((m) => request.admin?.hasPermission(settingsPermission(m.type, m.name)))
    .map((m) => ({ type: m.type, name: m.name }));
}

function requireModule(deps: ModuleSettingsPageDeps, request: FastifyRequest, type: string, name: string): InstanceType {
  if (!(TYPES as readonly string[]).includes(type) || !deps.modules.has(type as ModuleType, name)) throw new HttpError(404, `unknown module: ${type}/${name}`);
  hasPermission(request, settingsPermission(type, name));
  return type as InstanceType;
}

/** The submitted settings: strings only, without the form's own fields; a blank secret is left out (kept). */
function submitted(body: unknown): { label: string; data: Record<string, string> } {
  const form = (body ?? {}) as Record<string, unknown>;
  const data: Record<string, string> = {};
  for (const [key, value] of Object.entries(form)) {
    if (key === '_csrf' || key === 'label' || typeof value !== 'string') continue;
    if (SECRET_KEY_PATTERN.test(key) && value === '') continue;
    data[key] = value;
  }
  return { label: typeof form.label === 'string' ? form.label.trim() : '', data };
}

/** The per-field messages of a refused save (the module's error bag), or null for any other error. */
function errorsOf(error: unknown): Record<string, string[]> | null {
  const e = error as { statusCode?: number; errors?: unknown; message?: string; extra?: { errors?: unknown } };
  if (e?.statusCode !== 422) return null;
  const bag = e.errors ?? e.extra?.errors;
  return bag && typeof bag === 'object' && Object.keys(bag).length ? (bag as Record<string, string[]>) : { _: [String(e.message ?? 'invalid settings')] };
}

function withoutSecretValues(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([key]) => !SECRET_KEY_PATTERN.test(key)));
}

function secretsSet(data: Record<string, unknown>): string[] {
  return Object.entries(data).filter(([key, value]) => SECRET_KEY_PATTERN.test(key) && value !== undefined && value !== null && value !== '').map(([key]) => key);
}

/** Renders one settings page: the module's own HTML inside the admin layout. */
async function renderSettings(
  deps: ModuleSettingsPageDeps, request: FastifyRequest, reply: FastifyReply,
  opts: { type: InstanceType; name: string; uuid: string | null; stored: Record<string, unknown>; label: string; values?: Record<string, unknown>; errors?: Record<string, string[]>; test?: SettingsTestResult | null; status?: number },
): Promise<FastifyReply> {
  const module = deps.modules.instance<SettingsModule>(opts.type, opts.name, { payment_gateway_uuid: opts.uuid, module_data: opts.stored });
  if (typeof module.getSettingsPage !== 'function') throw new HttpError(404, `${opts.type}/${opts.name} has no settings page`);
  const data: SettingsPageData = {
    action: opts.uuid ? `${ROOT}/${opts.uuid}` : `${ROOT}/new/${opts.type}/${opts.name}`,
    test_action: opts.uuid && typeof (module as unknown as Partial<SettingsTestable>).testSettings === 'function' ? `${ROOT}/${opts.uuid}/test` : null,
    csrf: csrfToken(reply), base_url: `${request.protocol}://${request.host}`, label: opts.label,
    values: withoutSecretValues(opts.values ?? opts.stored), secrets_set: secretsSet(opts.stored), errors: opts.errors ?? {}, test_result: opts.test ?? null,
  };
  const html = await module.getSettingsPage(data);
  const title = `${opts.name} settings${opts.label ? `: ${opts.label}` : ''}`;
  return adminPage(deps, request, reply, 'module-page', { title, html }, { platform: 'modules' }, opts.status ?? 200);
}

/** The stored instance the admin may configure (404 unknown, 403 without its module's settings key). */
async function requireInstance(deps: ModuleSettingsPageDeps, request: FastifyRequest, uuid: string) {
  const found = await deps.moduleInstances.get(uuid);
  if (!found) throw new HttpError(404, `module instance not found: ${uuid}`);
  requireModule(deps, request, found.module_type, found.module_name);
  return { ...found, type: found.module_type as InstanceType };
}

/** What the module settings pages reach: the mounted modules, their instances and the module admin. */
export type ModuleSettingsPageDeps = AdminPageDeps & FlashDeps & Pick<WebDeps, 'moduleAdmin' | 'moduleInstances'>;

export function moduleSettingsPage(deps: ModuleSettingsPageDeps, app: FastifyInstance): void {
  app.get<{ Querystring: { module?: string } }>('/module-settings', async (request, reply) => {
    const wanted = request.query.module;
    if (wanted) {
      const [type = '', name = ''] = wanted.split('/');
      requireModule(deps, request, type, name);
    }
    const modules = configurable(deps, request).filter((m) => !wanted || wanted === `${m.type}/${m.name}`);
    if (modules.length === 0) throw new HttpError(403, INSUFFICIENT_PERMISSIONS);
    const groups = await Promise.all(modules.map(async (m) => ({
      ...m, new_href: `${ROOT}/new/${m.type}/${m.name}`,
      instances: (await deps.moduleInstances.list(m.type, m.name)).map((i) => ({ label: i.label, href: `${ROOT}/${i.uuid}` })),
    })));
    return adminPage(deps, request, reply, 'module-settings', { title: 'Module settings', groups }, { platform: 'modules' });
  });

  app.get<{ Params: { type: string; name: string } }>('/module-settings/new/:type/:name', async (request, reply) => {
    const type = requireModule(deps, request, request.params.type, request.params.name);
    return renderSettings(deps, request, reply, { type, name: request.params.name, uuid: null, stored: {}, label: '' });
  });

  app.post<{ Params: { type: string; name: string } }>('/module-settings/new/:type/:name', async (request, reply) => {
    const type = requireModule(deps, request, request.params.type, request.params.name);
    const { label, data } = submitted(request.body);
    try {
      const made = await deps.moduleAdmin.createInstance(type, request.params.name, label || request.params.name, data);
      flash(deps, reply, `${request.params.name} settings saved.`);
      return reply.redirect(`${ROOT}/${made.uuid}`, 303);
    } catch (error) {
      const errors = errorsOf(error);
      if (!errors) throw error;
      return renderSettings(deps, request, reply, { type, name: request.params.name, uuid: null, stored: {}, label, values: data, errors, status: 422 });
    }
  });

  app.get<{ Params: { uuid: string } }>('/module-settings/:uuid', async (request, reply) => {
    const found = await requireInstance(deps, request, request.params.uuid);
    return renderSettings(deps, request, reply, { type: found.type, name: found.module_name, uuid: found.uuid, stored: found.module_data, label: found.label });
  });

  app.post<{ Params: { uuid: string } }>('/module-settings/:uuid', async (request, reply) => {
    const found = await requireInstance(deps, request, request.params.uuid);
    const { label, data } = submitted(request.body);
    try {
      await deps.moduleAdmin.updateInstance(found.uuid, { label: label || found.label, module_data: data });
      flash(deps, reply, `${found.module_name} settings saved.`);
      return reply.redirect(`${ROOT}/${found.uuid}`, 303);
    } catch (error) {
      const errors = errorsOf(error);
      if (!errors) throw error;
      return renderSettings(deps, request, reply, {
        type: found.type, name: found.module_name, uuid: found.uuid, stored: found.module_data, label: label || found.label, values: { ...found.module_data, ...data }, errors, status: 422,
      });
    }
  });

  app.post<{ Params: { uuid: string } }>('/module-settings/:uuid/test', async (request, reply) => {
    const found = await requireInstance(deps, request, request.params.uuid);
    const module = deps.modules.instance(found.type, found.module_name, { payment_gateway_uuid: found.uuid, module_data: found.module_data }) as unknown as Partial<SettingsTestable>;
    if (typeof module.testSettings !== 'function') throw new HttpError(404, `${found.module_name} offers no settings test`);
    const { data } = submitted(request.body);
    const test = await module.testSettings(data);
    return renderSettings(deps, request, reply, { type: found.type, name: found.module_name, uuid: found.uuid, stored: found.module_data, label: found.label, test });
  });
}

