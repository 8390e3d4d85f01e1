// Client-area tabs of Product modules: tab rendering through variables_<tab>() and AJAX dispatch to controllerClient_<tab><Method>().
import { isModuleResponse, type ModuleRequest, type ModuleResponse } from './http.ts';
import type { Module } from './module.ts';
import { JOB_ERRORS } from './result.ts';

/** One tab: its title and template path (`client_area.<template_name>`), as the spec's menu entry. */
export interface ClientAreaTab {
  name: string;
  template: string;
  /**
   * Optional, an extension of the spec's entry (absent: the tab is rendered on every page, as the spec has it).
   * `'store'` declares that the tab's HTML (`variables_<tab>()` and its template) depends on nothing but what the
   * platform's store holds — the service record, its product, anything read through the context's stores — and on
   * the host's `csrf` and `locale`: not on the clock, a panel, the network or state kept in the process. The host may
   * then answer a page with the tab as rendered before while the store is unchanged since (any write to it, by anyone,
   * renders the tab anew; the client area's service page cache, docs/web.md). A tab showing live data leaves it out.
   */
  cache?: 'store';
}

export type ClientAreaMenu = Record<string, ClientAreaTab>;

/** What a client-area AJAX call answers: `{success:true, data}` (200) or `{success:false, message}` (500). */
export type ClientAreaBody = { success: true; data: unknown } | { success: false; message: string };

const TAB_KEY = /^[A-Za-z0-9_]+$/;
/** A handler's `<method>`: a letter, then letters or digits (`get`, `ikev2`, `ikev2Apple`), at most 64 characters. */
export const CLIENT_AREA_METHOD = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

interface WithMenu extends Module {
  getClientAreaMenuConfig(): ClientAreaMenu;
}

function member(module: Module, name: string): ((...args: unknown[]) => unknown) | null {
  const fn = (module as unknown as Record<string, unknown>)[name];
  return typeof fn === 'function' ? (fn as (...args: unknown[]) => unknown).bind(module) : null;
}

/** Variables of tab `tab` from `variables_<tab>()` ({} when the module has none). */
export async function clientAreaVariables(module: Module, tab: string): Promise<Record<string, unknown>> {
  if (!TAB_KEY.test(tab)) throw new Error(`invalid tab ${JSON.stringify(tab)}`);
  const fn = member(module, `variables_${tab}`);
  return fn ? ((await fn()) as Record<string, unknown>) ?? {} : {};
}

/**
 * HTML of a client-area tab: its template rendered with `variables_<tab>()` and the host's own values (`host`, e.g.
 * `{csrf}` for the tab's forms to work without JavaScript; they win on equal keys). Throws for a tab not in the menu.
 */
export async function renderClientAreaTab(module: WithMenu, tab: string, host: Record<string, unknown> = {}): Promise<string> {
  const menu = module.getClientAreaMenuConfig();
  const entry = Object.hasOwn(menu, tab) ? menu[tab] : undefined;
  if (!entry) throw new Error(`unknown client-area tab ${JSON.stringify(tab)}`);
  return module.view(entry.template, { ...(await clientAreaVariables(module, tab)), ...host });
}

/**
 * Dispatches an AJAX call to `controllerClient_<tab><Method>(request)`, `<Method>` being `method` with its first letter
 * upper-cased and the rest unchanged (`general` + `get` → `controllerClient_generalGet`, `connect` + `ikev2Apple` →
 * `controllerClient_connectIkev2Apple`; `ikev2apple` would be `controllerClient_connectIkev2apple`). The handler
 * returns its data; a throw answers 500 with a generic message (the real error goes to the module log). An unknown
 * tab or handler answers 404. A handler answering a ModuleResponse (a file download: body text or bytes with its
 * headers) has it written out unchanged.
 */
export async function callClientAreaController(module: WithMenu, tab: string, method: string, request: ModuleRequest): Promise<ModuleResponse & { body: ClientAreaBody | unknown }> {
  const name = `controllerClient_${tab}${method.charAt(0).toUpperCase()}${method.slice(1)}`;
  const handler = TAB_KEY.test(tab) && CLIENT_AREA_METHOD.test(method) && Object.hasOwn(module.getClientAreaMenuConfig(), tab) ? member(module, name) : null;
  if (!handler) return { status: 404, body: { success: false, message: 'Not found' } };
  try {
    const out = await handler(request);
    if (isModuleResponse(out)) return out;
    return { status: 200, body: { success: true, data: out } };
  } catch (error) {
    module.logError(`client_area.${tab}`, { handler: name }, error instanceof Error ? error.message : String(error));
    return { status: 500, body: { success: false, message: JOB_ERRORS.unexpected } };
  }
}
