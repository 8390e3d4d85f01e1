// A real `vpnhost panel serve` process for system tests and benches: optional network namespace, access hash, HTTP client.
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { Pool } from 'undici';

export const ROOT = new URL('../../', import.meta.url).pathname;
const BIN = join(ROOT, 'bin/vpnhost.js');
const READY = /panel listening on (http:\/\/\S+)/;
/** How much of a log `output()` shows and the ready-line search reads. */
const OUTPUT_TAIL = 64 * 1024;

/**
 * Forwarder from a unix socket to a TCP address inside a namespace. Unix sockets live in the file system, which the
 * namespaces share, so the test reaches a panel in its namespace without any change to the default namespace's
 * networking; the panel sees the client as 127.0.0.1.
 */
const BRIDGE_JS = `
const net = require('node:net');
const fs = require('node:fs');
const [path, host, port] = process.argv.slice(1);
try { fs.unlinkSync(path); } catch {}
const server = net.createServer((client) => {
  const upstream = net.connect(Number(port), host);
  client.pipe(upstream);
  upstream.pipe(client);
  const done = () => { client.destroy(); upstream.destroy(); };
  for (const s of [client, upstream]) { s.on('error', done); s.on('close', done); }
});
server.listen(path, () => { fs.chmodSync(path, 0o600); process.stdout.write('bridge ready\\n'); });
process.on('SIGTERM', () => process.exit(0));
`;

/** The response envelope of every panel endpoint. */
export interface Envelope<T = unknown> {
  error: string;
  msg: T;
  status: string;
}

/** One answer: HTTP status and parsed envelope. */
export interface PanelAnswer<T = unknown> {
  statusCode: number;
  body: Envelope<T>;
}

/** A request the panel answered with an error envelope. */
export class PanelApiError extends Error {
  constructor(readonly method: string, readonly path: string, readonly answer: PanelAnswer) {
    super(`${method} ${path}: ${answer.statusCode} ${answer.body.error || JSON.stringify(answer.body)}`);
    this.name = 'PanelApiError';
  }
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';
export type Form = Record<string, string | number>;

/** Options of {@link PanelClient}. */
export interface PanelClientOptions {
  /** Connect through this unix socket instead of TCP (the namespace bridge). */
  socketPath?: string;
  /** Keep-alive connections in the pool (default 4). */
  connections?: number;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
}

/** Keep-alive client of /api/v1: sends the access_hash cookie and form bodies, parses the envelope. */
export class PanelClient {
  private readonly pool: Pool;
  private readonly timeoutMs: number;

  constructor(origin: string, readonly accessHash: string, opts: PanelClientOptions = {}) {
    this.pool = new Pool(origin, { connections: opts.connections ?? 4, socketPath: opts.socketPath, pipelining: 1 });
    this.timeoutMs = opts.timeoutMs ?? 30_000;
  }

  /** Sends `method /api/v1<path>` (with `form` URL-encoded when given) and returns status and envelope. */
  async request<T = unknown>(method: HttpMethod, path: string, form?: Form): Promise<PanelAnswer<T>> {
    const res = await this.pool.request({
      method,
      path: `/api/v1${path}`,
      headers: {
        cookie: `access_hash=${this.accessHash}`,
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form ? new URLSearchParams(Object.entries(form).map(([k, v]) => [k, String(v)])).toString() : undefined,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
    const text = await res.body.text();
    let body: Envelope<T>;
    try {
      body = JSON.parse(text) as Envelope<T>;
    } catch {
      throw new Error(`${method} ${path}: ${res.statusCode} answered no JSON: ${text.slice(0, 200)}`);
    }
    return { statusCode: res.statusCode, body };
  }

  /** Like {@link request}, but throws {@link PanelApiError} unless the envelope says success; returns `msg`. */
  async ok<T = unknown>(method: HttpMethod, path: string, form?: Form): Promise<T> {
    const answer = await this.request<T>(method, path, form);
    if (answer.body.status !== 'success' || answer.body.error !== '') throw new PanelApiError(method, path, answer);
    return answer.body.msg;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/** Options of {@link PanelProcess.start}. */
export interface PanelProcessOptions {
  driver: 'linux' | 'simulated';
  /** Run the panel (and with it every command its driver spawns) inside this network namespace. */
  netns?: string;
  /** Data directory; a temp directory (removed by `cleanup`) when absent. */
  dataDir?: string;
  /** Address the panel listens on (default 127.0.0.1, port picked by the panel). */
  listenHost?: string;
  /** Client address the access hash is bound to (default 127.0.0.1, what the panel sees through the bridge). */
  clientIp?: string;
  wireguard?: 'auto' | 'kernel' | 'userspace';
  externalInterface?: string;
  /** Install a license for this many accounts first (vendor key pair made in the data directory). */
  licenseAccounts?: number;
  /** Node options before the CLI entry (e.g. `--cpu-prof`, which NODE_OPTIONS does not accept). */
  nodeArgs?: string[];
  /** Extra environment of the panel process (e.g. VPNHOST_LOG_LEVEL). */
  env?: Record<string, string>;
  /** Keep-alive connections of the client (default 4). */
  connections?: number;
  readyTimeoutMs?: number;
}

/** Runs `vpnhost ...args` to completion; returns the last line of stdout (the CLI's answer). */
export async function vpnhostCli(args: string[]): Promise<string> {
  const result = await execa(process.execPath, [BIN, ...args], { cwd: ROOT, timeout: 60_000, stdin: 'ignore' });
  return result.stdout.trim().split('\n').pop()!.trim();
}

/** `argv` prefixed with `ip netns exec NS` when a namespace is given. */
function inNamespace(netns: string | undefined, file: string, args: string[]): [string, string[]] {
  return netns ? ['ip', ['netns', 'exec', netns, file, ...args]] : [file, args];
}

/** Up to `length` bytes of a file from `position` (negative: the last -position bytes); '' when unreadable. */
function readPart(path: string, position: number, length = OUTPUT_TAIL): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return '';
  }
  try {
    const size = fstatSync(fd).size;
    const from = position < 0 ? Math.max(0, size + position) : Math.min(position, size);
    const buf = Buffer.alloc(Math.min(length, size - from));
    const read = readSync(fd, buf, 0, buf.length, from);
    return buf.subarray(0, read).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** Size of a file, 0 when it does not exist. */
function sizeOf(path: string): number {
  try {
    const fd = openSync(path, 'r');
    try {
      return fstatSync(fd).size;
    } finally {
      closeSync(fd);
    }
  } catch {
    return 0;
  }
}

/**
 * Spawns a long-running child with stdout and stderr appended to `logFile` (nothing in this process has to drain
 * them, so a bench's client does not pay for the panel's request logs) and polls the file (bounded) for `ready`.
 */
async function spawnReady(
  file: string,
  args: string[],
  ready: RegExp,
  logFile: string,
  timeoutMs: number,
  env: Record<string, string> = {},
): Promise<{ proc: ResultPromise; match: RegExpExecArray }> {
  const start = sizeOf(logFile);
  const fd = openSync(logFile, 'a', 0o600);
  let proc: ResultPromise;
  try {
    // A plain fd is handed to child_process as is (execa's types list only the standard numbers).
    proc = execa(file, args, { cwd: ROOT, env, reject: false, stdin: 'ignore', stdout: fd as 1, stderr: fd as 2 });
  } finally {
    closeSync(fd);
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = ready.exec(readPart(logFile, start));
    if (match) return { proc, match };
    if (!isRunning(proc)) {
      const res = await proc;
      throw new Error(`${file} ${args.join(' ')} exited (${res.exitCode ?? res.signal}) before ready:\n${readPart(logFile, start)}`);
    }
    if (Date.now() > deadline) {
      await stopProcess(proc, 'SIGKILL', 0);
      throw new Error(`no ${ready} within ${timeoutMs} ms from ${file} ${args.join(' ')}:\n${readPart(logFile, start)}`);
    }
    await sleep(50);
  }
}

function isRunning(proc: ResultPromise | null): boolean {
  return !!proc && proc.exitCode === null && proc.signalCode === null;
}

/** Sends `signal` and waits for the exit; SIGKILL after `graceMs` if it is still there. */
async function stopProcess(proc: ResultPromise | null, signal: NodeJS.Signals, graceMs: number): Promise<void> {
  if (!proc || !isRunning(proc)) return;
  proc.kill(signal);
  const timer = signal === 'SIGKILL' ? null : setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await proc;
  if (timer) clearTimeout(timer);
}

/**
 * A panel process. The first start lets the panel pick its port; `restart()` serves the same data directory on the
 * same port. In a namespace the test reaches it through a unix-socket bridge (see BRIDGE_JS). Panel output goes to
 * `logFile` (kept across restarts, removed by `cleanup`).
 */
export class PanelProcess {
  client!: PanelClient;
  /** `http://host:port` as the panel printed it (inside its namespace when it has one). */
  url = '';
  /** Unix socket of the namespace bridge, or null. */
  socketPath: string | null = null;
  /** stdout + stderr of every run of the panel. */
  readonly logFile: string;
  private proc: ResultPromise | null = null;
  private bridge: ResultPromise | null = null;
  private readonly ownDirs: string[] = [];
  private serveArgs: string[] = [];
  private env: Record<string, string>;

  private constructor(
    readonly opts: PanelProcessOptions,
    readonly dataDir: string,
    readonly accessHash: string,
    private readonly workDir: string,
  ) {
    this.logFile = join(workDir, 'panel.log');
    this.env = { ...opts.env };
  }

  /** Prepares the data directory (license, access hash), starts the panel and waits for its ready line. */
  static async start(opts: PanelProcessOptions): Promise<PanelProcess> {
    const workDir = mkdtempSync(join(tmpdir(), 'vpnhost-panel-'));
    const dataDir = opts.dataDir ?? join(workDir, 'data');
    let panel: PanelProcess | null = null;
    try {
      const serveArgs = ['panel', 'serve', '--driver', opts.driver, '--data', dataDir];
      if (opts.wireguard) serveArgs.push('--wireguard', opts.wireguard);
      if (opts.externalInterface) serveArgs.push('--external-interface', opts.externalInterface);
      if (opts.licenseAccounts) serveArgs.push('--license-public-key', await installLicense(dataDir, opts.licenseAccounts));
      const accessHash = await vpnhostCli(['panel', 'access-hash', 'create', '--ip', opts.clientIp ?? '127.0.0.1', '--data', dataDir]);
      panel = new PanelProcess(opts, dataDir, accessHash, workDir);
      panel.ownDirs.push(workDir);
      panel.serveArgs = serveArgs;
      await panel.launch(`${opts.listenHost ?? '127.0.0.1'}:0`);
      return panel;
    } catch (err) {
      if (panel) await panel.cleanup();
      else rmSync(workDir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The panel's pid (inside `ip netns exec`, which execs, it is the node process itself). */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return isRunning(this.proc);
  }

  /** The tail of the panel's output (all runs). */
  output(): string {
    return readPart(this.logFile, -OUTPUT_TAIL);
  }

  /** Sends `signal` (SIGKILL simulates a crash) and waits until the process is gone (SIGKILL after 15 s). */
  async kill(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    await stopProcess(this.proc, signal, 15_000);
  }

  /**
   * Stops the panel if it runs (SIGTERM), then serves the same data directory on the same address again; `env`
   * replaces the extra environment from here on.
   */
  async restart(opts: { env?: Record<string, string> } = {}): Promise<void> {
    await this.kill('SIGTERM');
    if (opts.env) this.env = { ...opts.env };
    await this.launch(new URL(this.url).host);
  }

  /** Stops panel and bridge, closes the client, removes the data directory if this helper made it, and the log. */
  async cleanup(): Promise<void> {
    await this.client?.close().catch(() => undefined);
    await stopProcess(this.proc, 'SIGKILL', 0);
    await stopProcess(this.bridge, 'SIGKILL', 0);
    for (const dir of this.ownDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  }

  private async launch(listen: string): Promise<void> {
    const [file, args] = inNamespace(this.opts.netns, process.execPath, [...(this.opts.nodeArgs ?? []), BIN, ...this.serveArgs, '--listen', listen]);
    const started = await spawnReady(file, args, READY, this.logFile, this.opts.readyTimeoutMs ?? 60_000, this.env);
    this.proc = started.proc;
    const url = started.match[1];
    if (url === this.url) return;
    this.url = url;
    await this.client?.close().catch(() => undefined);
    if (this.opts.netns) await this.startBridge(new URL(url));
    this.client = this.socketPath
      ? new PanelClient('http://localhost', this.accessHash, { socketPath: this.socketPath, connections: this.opts.connections })
      : new PanelClient(url, this.accessHash, { connections: this.opts.connections });
  }

  private async startBridge(target: URL): Promise<void> {
    await stopProcess(this.bridge, 'SIGKILL', 0);
    this.socketPath = join(this.workDir, 'panel.sock');
    const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
    const [file, args] = inNamespace(this.opts.netns, process.execPath, ['-e', BRIDGE_JS, this.socketPath, host, target.port]);
    this.bridge = (await spawnReady(file, args, /bridge ready/, join(this.workDir, 'bridge.log'), 30_000)).proc;
  }
}

/** Makes a vendor key pair in `dataDir/vendor`, issues and installs a license; returns the public key file. */
async function installLicense(dataDir: string, accounts: number): Promise<string> {
  const vendor = join(dataDir, 'vendor');
  await vpnhostCli(['license', 'keygen', '--out', vendor]);
  const publicKey = join(vendor, 'vendor-public.pem');
  const key = await vpnhostCli(['license', 'issue', '--private-key', join(vendor, 'vendor-private.pem'), '--accounts', String(accounts), '--expires', '2099-12-31']);
  await vpnhostCli(['panel', 'license', 'install', key, '--data', dataDir, '--license-public-key', publicKey]);
  return publicKey;
}
