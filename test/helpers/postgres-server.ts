// A private PostgreSQL for a test file: initdb into a temp dir, a free loopback port, the unix socket in that dir,
// stopped and removed on teardown. Found under /usr/lib/postgresql/<version>/bin (Debian) or on PATH.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { freePort } from '../fixtures/platform/processes.ts';
import { hasTool, isRoot } from './require-tools.ts';

/** A running private server: `url` points at its `vpnhost` database (user `vpnhost`, trust auth on loopback). */
export interface PostgresServer {
  url: string;
  port: number;
  /** Creates another empty database on the server and returns its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The directory holding initdb and postgres (the newest Debian version first), or null when none is installed. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'postgres'))).sort((a, b) => Number(b) - Number(a));
    if (versions.length > 0) return join(root, versions[0], 'bin');
  }
  if (hasTool('postgres') && hasTool('initdb')) {
    return execFileSync('sh', ['-c', 'dirname "$(command -v postgres)"'], { encoding: 'utf8' }).trim();
  }
  return null;
}

/**
 * True when PostgreSQL can be started. In CI (`CI=true`) a missing server fails the test; elsewhere the test is
 * skipped with the install command.
 */
export function requirePostgres(t: TestContext): boolean {
  if (postgresBinDir()) return true;
  const message = 'missing: postgresql (install with: sudo bash .ci/install-system-deps.sh)';
  if (process.env.CI === 'true') throw new Error(message);
  t.skip(message);
  return false;
}

/** The uid/gid to run PostgreSQL binaries as: the `postgres` user when this process is root (initdb refuses root). */
function serverUser(): { uid: number; gid: number } | Record<string, never> {
  if (!isRoot()) return {};
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** initdb + postgres on a free port; resolves once the server accepts connections (its log says so). */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('postgresql is not installed (sudo bash .ci/install-system-deps.sh)');
  const dir = mkdtempSync(join(tmpdir(), 'vpnhost-pg-'));
  const data = join(dir, 'data');
  const user = serverUser();
  if ('uid' in user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  execFileSync(join(bin, 'initdb'), ['-D', data, '-U', 'vpnhost', '--auth=trust', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'],
    { stdio: 'pipe', cwd: dir, ...user });
  const port = await freePort();
  const child: ChildProcess = spawn(join(bin, 'postgres'), [
    '-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`,
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=60',
  ], { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir, ...user });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    const onData = (chunk: Buffer): void => {
      log += chunk.toString();
      if (/database system is ready to accept connections/.test(log)) resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`postgres exited (${code}) before it was ready:\n${log}`)));
  });
  const base = `postgres://vpnhost@127.0.0.1:${port}`;
  const admin = async (sql: string): Promise<void> => {
    const client = new pg.Client({ connectionString: `${base}/postgres` });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin('CREATE DATABASE vpnhost');
  return {
    url: `${base}/vpnhost`,
    port,
    async createDatabase(name: string): Promise<string> {
      if (!/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(`bad database name ${name}`);
      await admin(`CREATE DATABASE ${name}`);
      return `${base}/${name}`;
    },
    async stop(): Promise<void> {
      if (child.exitCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        // SIGTERM: "smart" shutdown, once the last client has gone (pools close their sockets after `end()` resolves).
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
