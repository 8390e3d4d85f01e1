// How a module plugs into the host: the manifest its class carries (`static manifest`) — its config section's schema,
// its own tables (migrations), its services, its admin / worker / client routes, its scheduled work and hook listeners.
import type { FastifyPluginAsync } from 'fastify';
import type { Logger } from 'pino';
import type { ZodType } from 'zod';
import type { Hooks } from '../../hooks.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Capabilities, CapabilityMap, CapabilityName } from '../contract/capabilities.ts';
import type { PlatformReads } from '../contract/platform-reads.ts';
import type { Migration } from './store/migrator.ts';
import type { ModuleStore } from './store/query/module-store.ts';

/** Seals and opens secrets at rest (the platform SecretBox). */
export interface Sealer {
  seal(plain: string): string;
  open(sealed: string): string;
}

/**
 * A call of the module's own worker routes on the platform (`/api/worker/modules/<Type>/<Name>/<path>`), over the
 * worker's authenticated channel. Answers are parsed JSON, not yet checked: the module checks them with its own schemas.
 */
export interface ModuleWorkerCall {
  /** GET `path`; resolves with the parsed JSON answer, or null on 404. */
  get(path: string): Promise<unknown>;
  /**
   * POST `body` as JSON to `path`; resolves with the parsed JSON answer (null when empty). Rejects with WorkerApiError
   * on any status ≥ 400 (its `status`; 0 when the platform could not be reached or answered no JSON). Never retried
   * here: a POST's outcome may depend on the record's state.
   */
  post(path: string, body: unknown): Promise<unknown>;
}

/**
 * What a module's services are built from. On the platform process `store` (the module's own tables only),
 * `platform` and `sealer` are set and `worker` is null; in a remote worker it is the other way round: the module
 * reaches its data through its worker routes on the platform.
 */
export interface ExtensionEnv {
  /**
   * Builder queries over the module's own tables (its manifest's migrations, scope `module:<Type>/<Name>`) on the
   * platform's store, SQLite or PostgreSQL; a query naming any other table or raw SQL throws before it runs. Null in a
   * remote worker.
   */
  store: ModuleStore | null;
  /** The host's read API of platform data (services, customers, products, invoices); null in a remote worker. */
  platform: PlatformReads | null;
  /** Capabilities other modules provide (declared in the manifest's `requires` / `uses`). */
  capabilities: Capabilities;
  sealer: Sealer | null;
  worker: ModuleWorkerCall | null;
  /** The module's config.ts section (checked by `manifest.config` when given). */
  config: Readonly<Record<string, unknown>>;
  logger: Logger;
  clock: Clock;
}

/** Periodic work of a module, run by the platform process (never by remote workers). */
export interface ScheduledWork<Ext> {
  name: string;
  everyMs: number;
  run(ext: Ext): Promise<void>;
}

/** A panel as the admin's panels page and dashboard show it (health read live from the panel). */
export interface PanelHealth {
  name: string;
  location: string;
  api_url: string;
  reachable: boolean;
  version: string | null;
  /** The panel's error text when it could not be read. */
  error: string | null;
  accounts_used: number | null;
  accounts_available: number | null;
  license_valid: boolean | null;
}

/** Panels a module manages, for the admin's panels page: their health, and adding one (after a test call). */
export interface AdminPanels {
  health(): Promise<PanelHealth[]>;
  /** Tests the panel and stores it; throws an error with a `statusCode` of 422 and the panel's text when it cannot be used. */
  add(input: { name?: string; location: string; api_url: string; access_hash: string }): Promise<void>;
}

/**
 * A module's contribution to the host. Every member is optional; a module without a manifest is hosted with its class
 * alone. `Ext` is what `services()` builds: it is merged into the module's PlatformContext (so its instances reach it
 * as `this.ctx.<member>`) and handed to its routes, scheduled work and hook listeners.
 */
export interface ModuleManifest<Ext extends object = object> {
  /** Schema of the module's config.ts section; loading fails with its first issue. */
  config?: ZodType;
  /** Schema steps of the module's own tables, scope `module:<Type>/<Name>` (platform process only). */
  migrations?: readonly Migration[];
  /** The module's own services (stores, registries, pools). */
  services?(env: ExtensionEnv): Ext;
  /** Capabilities this module provides to others, built from its services (module/contract/capabilities.ts). */
  provides?: { [K in CapabilityName]?: (ext: Ext) => CapabilityMap[K] };
  /** Capabilities this module cannot work without: loading fails, naming the missing one, when no loaded module provides it. */
  requires?: readonly CapabilityName[];
  /** Capabilities this module uses when present (it degrades without them, e.g. a message without a connect link). */
  uses?: readonly CapabilityName[];
  /** Admin API routes, mounted under `/api/admin` behind admin tokens. */
  adminApi?(ext: Ext): FastifyPluginAsync;
  /** Worker API routes, mounted under `/api/worker/modules/<Type>/<Name>` behind worker tokens. */
  workerApi?(ext: Ext): FastifyPluginAsync;
  /** Client-area routes, mounted under `/client/modules/<Type>/<Name>`. */
  clientRoutes?(ext: Ext): FastifyPluginAsync;
  /** Panels this module manages (the admin's panels page and dashboard). */
  adminPanels?(ext: Ext): AdminPanels;
  /** Periodic work. */
  scheduled?: ReadonlyArray<ScheduledWork<Ext>>;
  /** Hook listeners, registered once per process that loads the module. */
  hooks?(hooks: Hooks, ext: Ext): void;
  /** Releases what `services()` opened (pools, timers). */
  close?(ext: Ext): Promise<void>;
}

/** Helper keeping `Ext` inferred when a module declares its manifest. */
export function defineManifest<Ext extends object>(manifest: ModuleManifest<Ext>): ModuleManifest<Ext> {
  return manifest;
}
