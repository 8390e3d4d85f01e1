// `vpnhost platform ...`: serve (API + workers), worker (workers only, BullMQ; local or remote), admin-token and
// worker-token create|list|delete, module list|activate|deactivate|update, admin create|list|password|delete (web admins).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { billingCommand } from './cli-billing.ts';
import { storeCommand } from './cli-store.ts';
import { openQueryStore, storeTarget } from './store/query/query-store.ts';
import { createPlatformLogger } from './logger.ts';
import { Platform } from './platform.ts';
import { startRemoteWorker } from './remote-worker.ts';
import { AdminUsers } from './services/admin-users.ts';
import { randomPassword } from './services/passwords.ts';
import { RoleRepository } from './services/roles.ts';
import { SessionStore } from './services/sessions.ts';
import { LIFECYCLE_ACTIONS, type LifecycleAction } from './services/module-admin.ts';
import { AdminTokenQueries, type TokenScope } from './store/query/repositories/admin-tokens.ts';
import { startPlatform, startWorkerOnly, type RunningPlatform } from './server.ts';

const USAGE = `usage:
  vpnhost platform serve [--listen HOST:PORT] [--data DIR] [--store STORE] [--queue embedded|redis://HOST:PORT] [--workers N]
  vpnhost platform worker [--data DIR] [--store STORE] --queue redis://HOST:PORT [--workers N]
  vpnhost platform worker --platform-url URL --token TOKEN --queue redis://HOST:PORT [--workers N]
  vpnhost platform admin-token create [--data DIR] [--comment TEXT]
  vpnhost platform admin-token list [--data DIR]
  vpnhost platform admin-token delete ID [--data DIR]
  vpnhost platform worker-token create|list|delete ID [--data DIR] [--comment TEXT]
  vpnhost platform module list [--data DIR]
  vpnhost platform admin create --email ADDRESS [--name NAME] [--role ROLE] [--password-file FILE] [--data DIR]
  vpnhost platform admin list [--data DIR]
  vpnhost platform admin password|delete --email ADDRESS [--password-file FILE] [--data DIR]
  vpnhost platform module activate|deactivate|update TYPE/NAME [--data DIR]
  vpnhost platform billing price|refund-policy|invoice|refund ...   (vpnhost platform billing --help)
  vpnhost platform store migrate --from DIR --to postgres://...   (vpnhost platform store --help)

  --workers N        job slots in this process (default 8; serve accepts 0 for an API-only process)
  --platform-url URL a remote worker: no data directory, every store operation through URL/api/worker
                     (use https:// or a private network: task inputs and panel access hashes cross it)
  --token TOKEN      the remote worker's token (worker-token create; prefer VPNHOST_PLATFORM_TOKEN)
  --store STORE      every command with --data: sqlite (the data directory's platform.db, default) or
                     postgres://USER@HOST:PORT/DB (or VPNHOST_PLATFORM_STORE); the data directory still holds
                     secret.key, the same file on every host of one platform

admin create: makes a web admin (role Administrator by default: every permission); without --password-file a random
  password is generated and printed once. admin password sets a new one the same way; it and admin delete end every
  session of that admin at once.

module: prints the module's answer (\`success\` or \`Error: ...\`, exit 1), recorded in the platform database; a
  platform running on the same data directory follows the switch within about a second (routes a module's manifest
  adds are mounted at its next start).

environment: VPNHOST_PLATFORM_LISTEN, VPNHOST_PLATFORM_DATA, VPNHOST_PLATFORM_QUEUE, VPNHOST_PLATFORM_WORKERS,
  VPNHOST_PLATFORM_URL, VPNHOST_PLATFORM_TOKEN (remote worker),
  VPNHOST_PLATFORM_LEASE_MS (embedded: how soon a dead process's task is retaken, default 30000),
  VPNHOST_PLATFORM_LOCK_MS (BullMQ: job lock and stalled-check interval, default 30000),
  VPNHOST_LOG_LEVEL (default info; logs go to stderr as JSON, secrets redacted)`;

const DEFAULT_LISTEN = '127.0.0.1:8090';
const DEFAULT_DATA = './data/platform';

/** Runs a `platform` subcommand; resolves to the exit code (serve and worker resolve after shutdown). */
export async function platformCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'billing') return billingCommand(rest, process.env.VPNHOST_PLATFORM_DATA ?? DEFAULT_DATA);
  if (sub === 'store') return storeCommand(rest, process.env.VPNHOST_PLATFORM_DATA ?? DEFAULT_DATA);
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      listen: { type: 'string' },
      data: { type: 'string' },
      queue: { type: 'string' },
      store: { type: 'string' },
      workers: { type: 'string' },
      comment: { type: 'string' },
      'platform-url': { type: 'string' },
      token: { type: 'string' },
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      'password-file': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (!sub || values.help || sub === 'help' || sub === '--help' || sub === '-h') {
    process.stdout.write(USAGE + '\n');
    return sub ? 0 : 2;
  }
  const dataDir = values.data ?? process.env.VPNHOST_PLATFORM_DATA ?? DEFAULT_DATA;
  // Checked once here, so a bad --store fails before anything starts (the commands open it themselves).
  storeTarget(values.store, dataDir);
  const queue = values.queue ?? process.env.VPNHOST_PLATFORM_QUEUE ?? 'embedded';
  const workers = parseWorkers(values.workers ?? process.env.VPNHOST_PLATFORM_WORKERS);
  switch (sub) {
    case 'serve': {
      const running = await startPlatform({
        listen: values.listen ?? process.env.VPNHOST_PLATFORM_LISTEN ?? DEFAULT_LISTEN,
        dataDir, store: values.store, queue, workers, queueOptions: queueTuning(),
      });
      process.stdout.write(`platform listening on ${running.url}\n`);
      return runUntilSignal(running);
    }
    case 'worker': {
      if (!/^rediss?:\/\//.test(queue)) throw new Error('worker needs --queue redis://HOST:PORT (the embedded queue runs inside `platform serve`)');
      if (workers === 0) throw new Error('worker needs --workers of at least 1');
      const platformUrl = values['platform-url'] ?? process.env.VPNHOST_PLATFORM_URL;
      if (platformUrl) {
        if (values.data !== undefined) throw new Error('a remote worker (--platform-url) has no data directory: drop --data');
        const token = values.token ?? process.env.VPNHOST_PLATFORM_TOKEN;
        if (!token) throw new Error('a remote worker needs --token or VPNHOST_PLATFORM_TOKEN (vpnhost platform worker-token create)');
        const tuning = queueTuning();
        const running = await startRemoteWorker({
          platformUrl, token, queue, workers,
          queueOptions: { lockDurationMs: tuning.lockDurationMs, stalledIntervalMs: tuning.stalledIntervalMs },
        });
        process.stdout.write(`platform worker started (${running.workerCount} concurrency, remote via ${redactUrl(platformUrl)}) on ${redactUrl(queue)} as worker ${running.workerId}\n`);
        return runUntilSignal(running);
      }
      const running = await startWorkerOnly({ dataDir, store: values.store, queue, workers, queueOptions: queueTuning() });
      process.stdout.write(`platform worker started (${workers ?? 'default'} concurrency) on ${redactUrl(queue)}\n`);
      return runUntilSignal(running);
    }
    case 'admin-token':
      return manageTokens('admin', positionals, values.store, dataDir, values.comment ?? '');
    case 'worker-token':
      return manageTokens('worker', positionals, values.store, dataDir, values.comment ?? '');
    case 'module':
      return manageModules(positionals, dataDir, values.store);
    case 'admin':
      return manageAdmins(positionals, dataDir, values);
    default:
      process.stderr.write(`vpnhost platform: unknown subcommand '${sub}'\n${USAGE}\n`);
      return 2;
  }
}

/** `admin-token` / `worker-token` create|list|delete on the platform store (`--store`, else `dataDir`'s SQLite). */
async function manageTokens(scope: TokenScope, positionals: string[], storeSpec: string | undefined, dataDir: string, comment: string): Promise<number> {
  const [action, id] = positionals;
  const store = await openQueryStore(storeTarget(storeSpec, dataDir));
  try {
    const tokens = new AdminTokenQueries(store, scope);
    if (action === 'create') {
      process.stdout.write((await tokens.create(comment)).token + '\n');
      return 0;
    }
    if (action === 'list') {
      for (const t of await tokens.list()) {
        process.stdout.write(`${t.id}\t${t.created_at}\t${t.last_used_at ?? '-'}\t${t.comment}\n`);
      }
      return 0;
    }
    if (action === 'delete' && id && /^\d+$/.test(id)) {
      if (await tokens.delete(Number(id))) return 0;
      process.stderr.write(`vpnhost platform ${scope}-token: no token with id ${id}\n`);
      return 1;
    }
    process.stderr.write(`vpnhost platform ${scope}-token: expected create, list or delete ID\n${USAGE}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

/** `module list` / `module activate|deactivate|update TYPE/NAME` on the platform of `dataDir` (no workers started). */
async function manageModules(positionals: string[], dataDir: string, store: string | undefined): Promise<number> {
  const [action, key] = positionals;
  const isLifecycle = (LIFECYCLE_ACTIONS as readonly string[]).includes(action ?? '');
  if (action !== 'list' && !(isLifecycle && key && /^[A-Za-z]+\/[A-Za-z][A-Za-z0-9_]*$/.test(key))) {
    process.stderr.write(`vpnhost platform module: expected list, or activate|deactivate|update TYPE/NAME\n${USAGE}\n`);
    return 2;
  }
  const platform = await Platform.open({ dataDir, store, logger: createPlatformLogger(process.env.VPNHOST_LOG_LEVEL ?? 'warn') });
  try {
    if (action === 'list') {
      for (const m of await platform.moduleAdmin.list()) {
        const state = m.state ? `${m.state.active ? 'active' : 'inactive'}\t${m.state.last_action}: ${m.state.last_result}` : `${m.enabled_in_config ? 'active' : 'inactive'}\t(config.ts)`;
        process.stdout.write(`${m.type}/${m.name}\t${m.installed_version ?? '-'}\t${state}\n`);
      }
      return 0;
    }
    const [type, name] = key.split('/');
    try {
      const answer = await platform.moduleAdmin.lifecycle(type, name, action as LifecycleAction);
      process.stdout.write(`${answer.result}\n`);
      return answer.result === 'success' ? 0 : 1;
    } catch (error) {
      process.stdout.write(`Error: ${(error as Error).message}\n`);
      return 1;
    }
  } finally {
    await platform.close();
  }
}

/** `admin create|list|password|delete` on the platform store (`--store`, else `dataDir`'s SQLite). */
async function manageAdmins(positionals: string[], dataDir: string, values: { store?: string; email?: string; name?: string; role?: string; 'password-file'?: string }): Promise<number> {
  const [action] = positionals;
  const store = await openQueryStore(storeTarget(values.store, dataDir));
  try {
    const roles = new RoleRepository(store);
    const admins = new AdminUsers(store, roles, new SessionStore(store));
    if (action === 'list') {
      const names = new Map((await roles.list()).map((r) => [r.id, r.name]));
      for (const a of await admins.list()) process.stdout.write(`${a.id}\t${a.email}\t${names.get(a.role_id) ?? '-'}\t${a.last_login_at ?? '-'}\n`);
      return 0;
    }
    if ((action === 'create' || action === 'password' || action === 'delete') && values.email) {
      const file = values['password-file'];
      const password = () => (file ? readFileSync(file, 'utf8').replace(/\r?\n$/, '') : randomPassword());
      try {
        if (action === 'create') {
          const secret = password();
          const created = await admins.create({ email: values.email, name: values.name, password: secret, role: values.role ?? 'Administrator' });
          process.stdout.write(`admin ${created.id} ${created.email}${file ? '' : `\npassword: ${secret}`}\n`);
          return 0;
        }
        const admin = await admins.findByEmail(values.email);
        if (!admin) throw new Error(`no admin with the address ${values.email}`);
        if (action === 'delete') {
          await admins.delete(admin.id);
          process.stdout.write(`admin ${admin.id} ${admin.email} deleted; their sessions ended\n`);
          return 0;
        }
        const secret = password();
        await admins.setPassword(admin.id, secret);
        process.stdout.write(`admin ${admin.id} ${admin.email}: password set, their sessions ended${file ? '' : `\npassword: ${secret}`}\n`);
        return 0;
      } catch (error) {
        process.stderr.write(`vpnhost platform admin: ${(error as Error).message}\n`);
        return 1;
      }
    }
    process.stderr.write(`vpnhost platform admin: expected create|password|delete --email ADDRESS, or list\n${USAGE}\n`);
    return 2;
  } finally {
    await store.close();
  }
}

function parseWorkers(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 512) throw new Error(`--workers must be an integer 0-512, got '${value}'`);
  return n;
}

/** Lease / lock durations from the environment (crash tests shorten them). */
function queueTuning(): { leaseMs?: number; lockDurationMs?: number; stalledIntervalMs?: number } {
  const ms = (name: string) => {
    const value = process.env[name];
    if (value === undefined || value === '') return undefined;
    const n = Number(value);
    if (!Number.isInteger(n) || n < 500 || n > 3_600_000) throw new Error(`${name} must be milliseconds 500-3600000, got '${value}'`);
    return n;
  };
  const lease = ms('VPNHOST_PLATFORM_LEASE_MS');
  const lock = ms('VPNHOST_PLATFORM_LOCK_MS');
  return { leaseMs: lease, lockDurationMs: lock, stalledIntervalMs: lock };
}

function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** Waits for SIGTERM/SIGINT, then shuts down gracefully; a second signal exits at once. */
function runUntilSignal(running: { close(): Promise<void> }): Promise<number> {
  return new Promise((resolve) => {
    let closing = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (closing) process.exit(130);
      closing = true;
      process.stderr.write(`platform: ${signal}, shutting down\n`);
      running.close().then(() => resolve(0), (err: Error) => {
        process.stderr.write(`platform: shutdown failed: ${err.message}\n`);
        resolve(1);
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}

export type { RunningPlatform };
