// Runs the panel: opens the data directory, builds the data plane and app, listens, reconciles on boot, shuts down cleanly.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from './app.ts';
import { createDataplane } from './dataplane/create-dataplane.ts';
import type { Dataplane } from './dataplane/dataplane.ts';
import { createLogger } from './logger.ts';
import { SecretBox } from '../shared/secret-box.ts';
import { BasicFtpUploader } from './services/backups/ftp-upload.ts';
import { LICENSE_PUBLIC_KEY_SETTING, toLicensePublicKey } from './services/license-key.ts';
import { databasePath, openDatabase } from './store/db.ts';
import { SettingsRepository } from './store/repositories/settings.ts';

/** Everything `vpnhost panel serve` can be told. */
export interface ServeOptions {
  /** `HOST:PORT` (`[::1]:8080` for IPv6); port 0 picks a free port. */
  listen: string;
  dataDir: string;
  driver: 'linux' | 'simulated';
  /** Public base URL; defaults to `http://<listen address>`. */
  baseUrl?: string;
  wireguard: 'auto' | 'kernel' | 'userspace';
  externalInterface: string | null;
  trustProxy: string[];
  /** PEM text of the vendor public key, or null. */
  licensePublicKeyPem: string | null;
  /** Bearer token of GET /metrics (null: access hash only). */
  metricsToken?: string | null;
  /** Per-peer series in GET /metrics. */
  metricsPerPeer?: boolean;
  /** Seconds between the watchdog's looks for a crashed unbound/charon (default 5; 0 = no automatic restart). */
  watchdogSeconds?: number;
  /** PEM of CA certificates trusted for FTPS backup uploads besides the system's (`--backup-ftp-ca`). */
  backupFtpCaPem?: string | null;
  logger?: Logger;
  /** A ready data-plane bundle to use instead of building one from `driver` (tests, demo); closed on shutdown. */
  dataplaneInstance?: Dataplane;
}

/** A running panel. */
export interface RunningPanel {
  app: FastifyInstance;
  /** `http://host:port` actually bound. */
  url: string;
  /** Settles when the boot reconcile is over. */
  bootReconcile: Promise<void>;
  /** Stops accepting, finishes in-flight requests and the running reconcile, closes data plane and database. */
  close(): Promise<void>;
}

/** `HOST:PORT` → host and port; throws on anything else. */
export function parseListen(listen: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(listen);
  const port = match ? Number(match[3]) : NaN;
  if (!match || port > 65535) throw new Error(`--listen must be HOST:PORT, got '${listen}'`);
  return { host: match[1] ?? match[2], port };
}

function httpUrl(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The panel's version from package.json. */
export function panelVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/**
 * Builds the data-plane bundle for `--driver` (see `createDataplane`). The API port is what the firewall's
 * `system_CONTROLPANEL` rule keeps open; with `--listen HOST:0` it is not known yet, so none is kept.
 */
export function createServeDataplane(opts: Pick<ServeOptions, 'driver' | 'dataDir' | 'wireguard' | 'listen'>): Promise<Dataplane> {
  const { port } = parseListen(opts.listen);
  const apiPort = port === 0 ? null : port;
  return opts.driver === 'simulated'
    ? createDataplane({ kind: 'simulated', apiPort })
    : createDataplane({ kind: 'linux', dataDir: opts.dataDir, wireguard: opts.wireguard, apiPort });
}

/** A TCP port free on `host` now (bound to port 0 and released). */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port: 0 }, () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the panel and resolves once it listens; the boot reconcile then runs in the background. */
export async function startPanel(opts: ServeOptions): Promise<RunningPanel> {
  const { host, port: asked } = parseListen(opts.listen);
  // Port 0: pick the free port now, so the firewall's system_CONTROLPANEL rule can keep it open from the start.
  const port = asked === 0 ? await freePort(host) : asked;
  const logger = opts.logger ?? createLogger();
  const publicKey = toLicensePublicKey(opts.licensePublicKeyPem);
  const db = openDatabase(databasePath(opts.dataDir));
  let dataplane: Dataplane | null = null;
  try {
    if (opts.licensePublicKeyPem && publicKey) new SettingsRepository(db).set(LICENSE_PUBLIC_KEY_SETTING, opts.licensePublicKeyPem);
    dataplane = opts.dataplaneInstance ?? (await createServeDataplane({ ...opts, listen: httpUrl(host, port).slice('http://'.length) }));
    const secretBox = SecretBox.open(opts.dataDir);
    const deps = {
      db, dataplane, dataDir: opts.dataDir, secretBox, logger, trustProxy: opts.trustProxy,
      licensePublicKey: publicKey, version: panelVersion(), externalInterface: opts.externalInterface, listenAddress: host,
      apiPort: port === 0 ? null : port,
      metricsToken: opts.metricsToken ?? null, metricsPerPeer: opts.metricsPerPeer ?? false,
      backups: { ftp: new BasicFtpUploader({ ca: opts.backupFtpCaPem ?? undefined }) },
      baseUrl: opts.baseUrl ?? (port === 0 ? '' : httpUrl(host, port)),
    };
    const app = buildApp(deps);
    await app.listen({ host, port });
    const address = app.server.address();
    const boundPort = typeof address === 'object' && address ? address.port : port;
    const url = httpUrl(host, boundPort);
    if (!deps.baseUrl) deps.baseUrl = url; // port 0: known only now
    const bootReconcile = app.services.system.reconcileOnBoot();
    await app.services.trafficLogging.start();
    app.services.statistics.scheduler.start();
    app.services.backupScheduler.start();
    let closing: Promise<void> | null = null;
    const activeDataplane = dataplane;
    const close = () =>
      (closing ??= (async () => {
        await app.services.watchdog.stop();
        await app.services.trafficLogging.stop();
        await app.services.backupScheduler.stop(); // waits for a running scheduled archive
        await app.close();
        await bootReconcile;
        await app.services.reconciler.whenIdle();
        await app.services.statistics.scheduler.stop(); // last traffic sample before the data plane closes
        await app.services.statistics.sampler.close(); // then its worker thread ends
        await activeDataplane.close();
        db.close();
      })());
    // after the boot reconcile started what is wanted: until then a daemon not yet started is no crash
    const watchdogMs = (opts.watchdogSeconds ?? 5) * 1000;
    if (watchdogMs > 0) void bootReconcile.then(() => closing || app.services.watchdog.start(watchdogMs));
    return { app, url, bootReconcile, close };
  } catch (err) {
    await dataplane?.close().catch(() => undefined);
    db.close();
    throw err;
  }
}

/** `vpnhost panel serve`: starts, prints `panel listening on <url>`, runs until SIGTERM/SIGINT; resolves to the exit code. */
export async function servePanel(opts: ServeOptions): Promise<number> {
  const logger = opts.logger ?? createLogger();
  const panel = await startPanel({ ...opts, logger });
  process.stdout.write(`panel listening on ${panel.url}\n`);
  return new Promise<number>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        logger.warn({ signal }, 'second signal: exiting without waiting');
        process.exit(1);
      }
      logger.info({ signal }, 'shutting down');
      panel.close().then(
        () => {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          logger.info('panel stopped');
          resolve(0);
        },
        (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          resolve(1);
        },
      );
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
