// Module host service behind the admin API: modules switched on/off/updated at run time, Payment gateway and
// Notification channel instances (sealed module_data, secrets never answered), payment webhooks, Plugin routes.
import type { ModuleRequest, ModuleResponse } from '../../contract/http.ts';
import { isModuleResponse } from '../../contract/http.ts';
import type { Module } from '../../contract/module.ts';
import type { Notification } from '../../contract/notification.ts';
import type { Payment } from '../../contract/payment.ts';
import type { ModuleType } from '../../contract/platform-context.ts';
import { Plugin, type RouteEntry } from '../../contract/plugin.ts';
import { SECRET_KEY_PATTERN } from '../../contract/redact.ts';
import type { LifecycleResult } from '../../contract/result.ts';
import type { ModuleRef } from '../../task/module-job.ts';
import { HttpError, NOT_FOUND } from '../errors.ts';
import { UNKNOWN_MODULE_KEY, type ModuleLoader } from '../loader.ts';
import type { ModuleInstance, ModuleInstanceStore, ModuleInstanceSummary } from './module-store.ts';
import { withoutSecrets } from './service-admin.ts';

export const LIFECYCLE_ACTIONS = ['activate', 'deactivate', 'update'] as const;
export type LifecycleAction = (typeof LIFECYCLE_ACTIONS)[number];

export const UNKNOWN_GATEWAY = (uuid: string) => `module instance not found: ${uuid}`;
const NOT_A_GATEWAY = (uuid: string) => `module instance ${uuid} is not a payment gateway`;
const INSTANCE_TYPES_ONLY = 'only Payment and Notification modules have instances (module_data)';

const MODULE_TYPE_NAMES = ['Product', 'Plugin', 'Payment', 'Notification'] as const;

/** A module admin route matched by method and path. */
export interface ModuleRouteMatch {
  route: RouteEntry;
  /** `api` (adminApiRoutes: JSON answers) or `web` (adminWebRoutes: pages). */
  kind: 'api' | 'web';
  params: Record<string, string>;
  module: Module;
  /** Calls the route's controller with the request (params bound); a plain value answers 200. */
  invoke(request: ModuleRequest): Promise<ModuleResponse>;
}

/** An instance as the admin API answers it: `module_data` without its secret members, their names in `secret_keys`. */
export interface ModuleInstanceView extends ModuleInstanceSummary {
  module_data: Record<string, unknown>;
  secret_keys: string[];
}

/** Where a gateway/channel instance's module_data comes from: the platform store, or the worker API in a remote worker. */
export interface ModuleInstanceLookup {
  get(uuid: string): ModuleInstance | null | Promise<ModuleInstance | null>;
}

/** Rebuilds a non-Product ModuleJob's instance: a gateway/channel bound with its opened module_data, else a plain one. */
export async function resolveHostedModule(modules: ModuleLoader, instances: ModuleInstanceLookup, ref: ModuleRef): Promise<Module> {
  const type = ref.type as ModuleType;
  if (!modules.has(type, ref.name)) throw new Error(`module ${type}/${ref.name} is not loaded`);
  if (!ref.payment_gateway_uuid) return modules.instance(type, ref.name);
  const found = await instances.get(ref.payment_gateway_uuid);
  if (!found || found.module_type !== type || found.module_name !== ref.name) throw new Error(UNKNOWN_GATEWAY(ref.payment_gateway_uuid));
  return modules.instance(type, ref.name, { payment_gateway_uuid: found.uuid, module_data: found.module_data });
}

export class ModuleAdmin {
  constructor(private readonly modules: ModuleLoader, private readonly instances: ModuleInstanceStore) {}

  list(): ReturnType<ModuleLoader['list']> {
    return this.modules.list();
  }

  /** activate / deactivate / update of a module with a config.ts section; answers (and records) `success` or `Error: ...`. */
  async lifecycle(type: string, name: string, action: LifecycleAction): Promise<{ module: string; action: LifecycleAction; result: LifecycleResult }> {
    if (!this.modules.known(type, name)) throw new HttpError(404, UNKNOWN_MODULE_KEY(`${type}/${name}`));
    const result = await this.modules[action](type, name);
    return { module: `${type}/${name}`, action, result };
  }

  /** Drops the cached lookups of a module (tag = its name) or of every module (tag `module`). */
  invalidateCache(tag: string): { dropped: number } {
    return { dropped: this.modules.invalidateCache(tag) };
  }

  /** Validates `module_data` with the module's getModuleData and stores it sealed as a new gateway/channel instance. */
  async createInstance(type: string, name: string, label: string, data: Record<string, unknown>): Promise<ModuleInstanceView> {
    const module = this.instanceModule(type, name);
    const clean = module.getModuleData(data);
    return view(await this.instances.create(type as 'Payment' | 'Notification', name, label, clean));
  }

  async listInstances(type: string, name: string): Promise<ModuleInstanceSummary[]> {
    this.instanceModule(type, name);
    return this.instances.list(type, name);
  }

  async getInstance(uuid: string): Promise<ModuleInstanceView> {
    return view(await this.requireInstance(uuid));
  }

  /** Merges `module_data` into the stored one (a secret left out keeps its value), validated again; renames with `label`. */
  async updateInstance(uuid: string, patch: { label?: string; module_data?: Record<string, unknown> }): Promise<ModuleInstanceView> {
    const current = await this.requireInstance(uuid);
    const module = this.instanceModule(current.module_type, current.module_name);
    const clean = module.getModuleData({ ...current.module_data, ...(patch.module_data ?? {}) });
    return view((await this.instances.update(uuid, patch.label ?? current.label, clean))!);
  }

  /**
   * A payment gateway's callback: the exact raw body bytes and the headers go to the Payment module bound to the
   * gateway (its opened module_data), whose answer is written back unchanged.
   */
  async webhook(gatewayUuid: string, request: ModuleRequest): Promise<ModuleResponse> {
    const found = await this.instances.get(gatewayUuid);
    if (!found) throw new HttpError(404, UNKNOWN_GATEWAY(gatewayUuid));
    if (found.module_type !== 'Payment') throw new HttpError(404, NOT_A_GATEWAY(gatewayUuid));
    if (!this.modules.has('Payment', found.module_name)) throw new HttpError(404, `module Payment/${found.module_name} is not active`);
    const payment = this.modules.instance<Payment>('Payment', found.module_name, { payment_gateway_uuid: found.uuid, module_data: found.module_data });
    return request.method === 'GET' ? payment.apiWebhookGet(request) : payment.apiWebhookPost(request);
  }

  /** Runs the Plugin route `method` `path` (relative to `/admin/modules/Plugin/<name>/`) of its admin web or API routes. */
  async pluginRoute(name: string, path: string, request: ModuleRequest): Promise<ModuleResponse> {
    const found = this.findModuleRoute('Plugin', name, request.method, path);
    if (!found) throw new HttpError(404, `${NOT_FOUND}: ${request.method} /admin/modules/Plugin/${name}/${path}`);
    return found.invoke(request);
  }

  /**
   * The admin route of a loaded module (`adminApiRoutes()` first, then `adminWebRoutes()`; any module type that
   * declares them) matching `method` and `path` (relative to `/admin/modules/<Type>/<name>/`), with its `{name}`
   * parameters and a call of its controller; null when none matches. The caller checks `route.permission`.
   */
  findModuleRoute(type: string, name: string, method: string, path: string): ModuleRouteMatch | null {
    if (!(MODULE_TYPE_NAMES as readonly string[]).includes(type) || !this.modules.has(type as ModuleType, name)) return null;
    const module = this.modules.instance(type as ModuleType, name);
    const routes = (kind: 'api' | 'web'): RouteEntry[] => {
      const fn = (module as unknown as Record<string, unknown>)[kind === 'api' ? 'adminApiRoutes' : 'adminWebRoutes'];
      const list = typeof fn === 'function' ? (fn as () => unknown).call(module) : [];
      return Array.isArray(list) ? (list as RouteEntry[]) : [];
    };
    for (const kind of ['api', 'web'] as const) {
      for (const route of routes(kind)) {
        const params = matchRoute(route, method, path);
        if (!params) continue;
        return {
          route, kind, params, module,
          invoke: async (request) => {
            const [controllerName, methodName] = route.controller.split('@');
            const controllers = module instanceof Plugin ? module.controllers() : {};
            const target = (controllers[controllerName] ?? module) as Record<string, unknown>;
            const fn = target[methodName];
            if (typeof fn !== 'function') throw new HttpError(500, `${type} ${name}: controller ${route.controller} has no such method`);
            const out = await (fn as (r: ModuleRequest) => unknown).call(target, { ...request, params });
            return isModuleResponse(out) ? out : { status: 200, body: out ?? null };
          },
        };
      }
    }
    return null;
  }

  private instanceModule(type: string, name: string): Payment | Notification {
    if (type !== 'Payment' && type !== 'Notification') throw new HttpError(422, INSTANCE_TYPES_ONLY);
    if (!this.modules.has(type, name)) throw new HttpError(404, UNKNOWN_MODULE_KEY(`${type}/${name}`));
    return this.modules.instance<Payment | Notification>(type, name);
  }

  private async requireInstance(uuid: string): Promise<ModuleInstance> {
    const found = await this.instances.get(uuid);
    if (!found) throw new HttpError(404, UNKNOWN_GATEWAY(uuid));
    return found;
  }
}

function view(instance: ModuleInstance): ModuleInstanceView {
  const { module_data, ...summary } = instance;
  return { ...summary, module_data: withoutSecrets(module_data), secret_keys: secretKeys(module_data) };
}

function secretKeys(data: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(data).flatMap(([key, value]) => {
    const path = prefix + key;
    if (SECRET_KEY_PATTERN.test(key)) return [path];
    return value && typeof value === 'object' && !Array.isArray(value) ? secretKeys(value as Record<string, unknown>, `${path}.`) : [];
  });
}

/** `{name}` segments of the route's uri bound to the path's, or null when method or path differ. */
function matchRoute(route: RouteEntry, method: string, path: string): Record<string, string> | null {
  if (route.method.toUpperCase() !== method.toUpperCase()) return null;
  const want = route.uri.replace(/^\/+|\/+$/g, '').split('/');
  const got = path.replace(/^\/+|\/+$/g, '').split('/');
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const m = /^\{(\w+)\}$/.exec(want[i]);
    if (m) params[m[1]] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}
