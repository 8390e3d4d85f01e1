// Builds a PlatformContext for contract unit tests: real SQLite in a temp dir, in-memory services and queue, captured pino.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { createHooks, type HookEvents, type Hooks } from '../../../../hooks.ts';
import { ModuleCache } from '../../../../module/contract/cache.ts';
import { runMigrations } from '../../../../module/platform/store/migrator.ts';
import { sqliteQueryStore, type QueryStore } from '../../../../module/platform/store/query/query-store.ts';
import { MODULE_LOG_MIGRATIONS, ModuleLogRepository } from '../../../../module/platform/store/query/repositories/module-logs.ts';
import { MODULE_VERSION_MIGRATIONS, ModuleVersionQueries, StoredModuleVersions } from '../../../../module/platform/store/query/repositories/module-versions.ts';
import type { Clock, PlatformContext } from '../../../../module/contract/platform-context.ts';
import { runModuleJobAttempt } from '../../../../module/contract/run-module-job.ts';
import type { Module } from '../../../../module/contract/module.ts';
/** Test-only module views (SampleProduct) live outside the production views/ tree. */
const FIXTURE_VIEWS_DIR = new URL('../../../fixtures/views/', import.meta.url).pathname;
import { FakeQueue, taskFacade } from './fake-queue.ts';
import { MemoryServices } from './memory-services.ts';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse('2026-01-01T00:00:00.000Z')) {}
  now(): Date {
    return new Date(this.ms);
  }
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export interface TestPlatform {
  ctx: PlatformContext;
  dir: string;
  db: Database.Database;
  /** The query layer on `db`. */
  store: QueryStore;
  /** The module log table (`read` waits for the writes on their way). */
  logs: ModuleLogRepository;
  /** The module version table as the host reads it (`ctx.versions` is the modules' view of it). */
  versionQueries: ModuleVersionQueries;
  /** The modules' version store (`record` stores and remembers). */
  versions: StoredModuleVersions;
  services: MemoryServices;
  queue: FakeQueue;
  hooks: Hooks;
  clock: ManualClock;
  /** Raw pino output lines. */
  logLines: string[];
  /** Every service event emitted, in order. */
  events: Array<{ event: keyof HookEvents; payload: HookEvents[keyof HookEvents] }>;
  cleanup(): void;
}

export function makePlatform(opts: { config?: Record<string, unknown>; viewsDir?: string } = {}): TestPlatform {
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-contract-'));
  const db = new Database(join(dir, 'platform.sqlite'));
  const logLines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  const hooks = createHooks(logger);
  const events: TestPlatform['events'] = [];
  for (const event of ['service.created', 'service.provisioned', 'service.failed', 'service.suspended', 'service.unsuspended', 'service.terminated', 'service.package_changed'] as const) {
    hooks.on(event, (payload) => void events.push({ event, payload }));
  }
  const services = new MemoryServices();
  const queue = new FakeQueue();
  queue.register('ModuleJob', (input, taskCtx) => runModuleJobAttempt(input.module as Module, String(input.method), taskCtx));
  const clock = new ManualClock();
  runMigrations(db, 'module-logs', MODULE_LOG_MIGRATIONS, clock);
  runMigrations(db, 'module-versions', MODULE_VERSION_MIGRATIONS, clock);
  const store = sqliteQueryStore(db);
  const logs = new ModuleLogRepository(store);
  const versions = new StoredModuleVersions(store, clock);
  const ctx: PlatformContext = {
    services,
    moduleLogs: logs,
    versions,
    tasks: taskFacade(queue),
    hooks,
    logger,
    config: opts.config ?? { enabled: true, version: '1.0.0' },
    viewsDir: opts.viewsDir ?? FIXTURE_VIEWS_DIR,
    clock,
    cache: new ModuleCache(clock),
  };
  return {
    ctx, dir, db, store, logs, versionQueries: new ModuleVersionQueries(store, clock), versions, services, queue, hooks, clock, logLines, events,
    cleanup() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
