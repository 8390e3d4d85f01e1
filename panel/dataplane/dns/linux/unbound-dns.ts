// The linux DNS seam: the panel's own unbound (config dir, control keys, supervised daemon), changed incrementally.
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DaemonRunner } from '../../linux/runner.ts';
import { checkDnsConfig, parseUnboundVersion, planUnboundChange, renderUnboundConf, type UnboundPaths } from '../../render/unbound-conf.ts';
import { DnsConfigError, DnsRuntimeError, sameDnsConfig, type Dns, type DnsApplyOutcome, type DnsConfig, type DnsState } from '../dns.ts';
import { DaemonSupervisor } from '../../linux/daemon-supervisor.ts';

/** Options of {@link UnboundDns}. */
export interface UnboundDnsOptions {
  runner: DaemonRunner;
  /** The resolver's own directory (`<dataDir>/unbound`): config, keys, pid file, log, applied state. */
  dir: string;
  /** Resolver port on the listen addresses (default 53). */
  port?: number;
  /** `unbound-control` TCP port on 127.0.0.1 (default 8954, beside a system unbound's 8953). */
  controlPort?: number;
  /** Network namespace to start the daemon in (tests; the runner is bound to the same one). */
  netns?: string;
}

/**
 * {@link Dns} on unbound. Files under `dir`: `unbound.conf` (rendered by `renderUnboundConf`), the four
 * `unbound_{server,control}.{key,pem}` of `unbound-control-setup -d dir` (made once), `unbound.pid`,
 * `unbound.log` (the daemon's stderr) and `applied.json` (the config the running daemon serves, so a restarted
 * panel plans its changes against it). Every new config is written beside the live one and checked with
 * `unbound-checkconf` before it replaces it, so a refused config never reaches the daemon.
 */
export class UnboundDns implements Dns {
  private readonly paths: UnboundPaths;
  private readonly conf: string;
  private readonly process: DaemonSupervisor;
  private current: DnsConfig | null = null;
  private loaded = false;

  constructor(private readonly opts: UnboundDnsOptions) {
    this.paths = { dir: opts.dir, port: opts.port ?? 53, controlPort: opts.controlPort ?? 8954 };
    this.conf = join(opts.dir, 'unbound.conf');
    // foreground (`-d`) in its own session: it outlives a panel restart, like the WireGuard links, and is adopted by
    // pid file; restarted after a crash by the watchdog (through reconcile), not by the supervisor
    this.process = new DaemonSupervisor(opts.runner, {
      name: 'unbound', cmd: 'unbound', args: ['-d', '-c', this.conf], detached: true,
      pidPath: join(opts.dir, 'unbound.pid'), writesPidFile: true, marker: { arg: this.conf },
      outputPath: join(opts.dir, 'unbound.log'), leftover: 'adopt', restart: null, explain: ({ output }) => unboundErrors(output),
      ready: async () => (await this.control(['status'], true)).exitCode === 0,
    });
  }

  async apply(config: DnsConfig | null): Promise<DnsApplyOutcome> {
    await this.load();
    if (!config || config.listen.length === 0) {
      const was = this.process.alive();
      await this.process.stop();
      await this.remember(null);
      return was === null ? 'unchanged' : 'stopped';
    }
    checkDnsConfig(config);
    const text = renderUnboundConf(config, this.paths);
    const running = this.process.alive() !== null && this.current !== null;
    if (running && sameDnsConfig(this.current, config)) return 'unchanged';
    await this.ensureKeys();
    const previous = existsSync(this.conf) ? await readFile(this.conf, 'utf8') : null;
    await this.install(text);
    if (!running) {
      // A live daemon whose config is unknown (applied.json lost) would hold port 53: replace it.
      if (this.process.alive() !== null) await this.process.stop();
      await this.start(config);
      return 'started';
    }
    const plan = planUnboundChange(this.current!, config);
    try {
      if (plan.kind === 'restart') {
        await this.process.stop();
        await this.start(config);
        return 'restarted';
      }
      if (plan.kind === 'reload') await this.control(['reload']);
      else for (const args of plan.commands) await this.control(args);
      await this.remember(config);
      return plan.kind === 'reload' ? 'reloaded' : 'changed';
    } catch (err) {
      await this.restore(previous);
      throw err instanceof DnsConfigError || err instanceof DnsRuntimeError ? err : new DnsRuntimeError((err as Error).message);
    }
  }

  async state(): Promise<DnsState> {
    await this.load();
    const pid = this.process.alive();
    return { running: pid !== null, pid, crash: this.process.state().lastError };
  }

  /** `unbound -V` → `1.17.1`; `''` when unbound is missing. */
  async version(): Promise<string> {
    const result = await this.opts.runner.run('unbound', ['-V'], { allowFailure: true }).catch(() => null);
    return result && result.exitCode === 0 ? parseUnboundVersion(result.stdout) : '';
  }

  applied(): DnsConfig | null {
    return this.current && structuredClone(this.current);
  }

  async stop(): Promise<void> {
    await this.load();
    await this.process.stop();
    await this.remember(null);
  }

  async close(): Promise<void> {
    this.process.release();
  }

  /** Starts the daemon on the installed config; ready once `unbound-control status` answers. */
  private async start(config: DnsConfig): Promise<void> {
    try {
      await this.process.start();
    } catch (err) {
      throw new DnsRuntimeError((err as Error).message);
    }
    await this.remember(config);
  }

  /** After a failed change: the previous file back and, if the daemon died meanwhile, started on it again. */
  private async restore(previous: string | null): Promise<void> {
    if (previous === null || this.current === null) return;
    await writeFile(this.conf, previous, { mode: 0o600 });
    if (this.process.alive() === null) await this.start(this.current).catch(() => undefined);
    else await this.control(['reload'], true).catch(() => undefined);
  }

  /** Writes `text` as `unbound.conf.next`, checks it with `unbound-checkconf`, then renames it over the live file. */
  private async install(text: string): Promise<void> {
    const next = `${this.conf}.next`;
    await writeFile(next, text, { mode: 0o600 });
    const check = await this.opts.runner.run('unbound-checkconf', [next], { allowFailure: true });
    if (check.exitCode !== 0) {
      await rm(next, { force: true });
      const reason = `${check.stderr}\n${check.stdout}`.split('\n').map((l) => l.trim()).filter(Boolean).pop() ?? `exit code ${check.exitCode}`;
      throw new DnsConfigError(`unbound-checkconf: ${reason.replace(`${next}:`, 'unbound.conf:')}`);
    }
    await rename(next, this.conf);
  }

  /** `unbound-control -c <conf> ARGS` (TLS to 127.0.0.1:<controlPort> with the panel's own keys). */
  private async control(args: string[], allowFailure = false) {
    return this.opts.runner.run('unbound-control', ['-c', this.conf, ...args], { allowFailure });
  }

  /** Makes the config directory and, once, the control keys (`unbound-control-setup -d <dir>`). */
  private async ensureKeys(): Promise<void> {
    await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    const files = ['unbound_server.key', 'unbound_server.pem', 'unbound_control.key', 'unbound_control.pem'];
    if (files.every((f) => existsSync(join(this.opts.dir, f)))) return;
    await this.opts.runner.run('unbound-control-setup', ['-d', this.opts.dir]);
  }

  private async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    try {
      this.current = JSON.parse(await readFile(join(this.opts.dir, 'applied.json'), 'utf8')) as DnsConfig;
    } catch {
      this.current = null;
    }
  }

  private async remember(config: DnsConfig | null): Promise<void> {
    this.current = config && structuredClone(config);
    await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    await writeFile(join(this.opts.dir, 'applied.json'), JSON.stringify(this.current), { mode: 0o600 });
  }
}

/**
 * What unbound logged about a failure: its last two `error` lines (it names the cause, e.g. `can't bind socket:
 * Address already in use for 10.0.0.1 port 53`, before `fatal error: could not open ports`) joined with `; `,
 * without its `[time] unbound[pid:0] ` prefix; '' when it logged none.
 */
function unboundErrors(text: string): string {
  const lines = text.split('\n').map((l) => l.trim().replace(/^\[\d+\] unbound\[\d+:\d+\] /, '')).filter(Boolean);
  return lines.filter((l) => /error/i.test(l)).slice(-2).join('; ');
}
