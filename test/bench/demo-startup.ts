// Bench: how long `vpnhost demo` takes to print its banner, idle and with N busy processes on the machine, next to a floor
// measured in the same run (`vpnhost --help`: node + tsx start-up, nothing loaded) and to the module-loading share
// (importing the demo's code without running it). Usage: node --import tsx test/bench/demo-startup.ts [--rounds 3] [--load 0,4]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fmt, median } from './bench-math.ts';

const ROOT = new URL('../..', import.meta.url).pathname;
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, load: { type: 'string', default: '0,4' } } });
const rounds = Math.max(1, Math.min(20, Number(values.rounds)));
const loads = values.load.split(',').map(Number).filter((n) => Number.isInteger(n) && n >= 0 && n <= 16);

/** Runs node with `args` until it prints `ready` (or exits); answers the wall time in ms, then stops it. */
function timeTo(args: string[], ready: RegExp | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    let done = false;
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!done && ready?.test(out)) {
        done = true;
        const ms = performance.now() - started;
        child.once('exit', () => resolve(ms));
        child.kill('SIGINT');
      }
    });
    child.once('exit', (code) => {
      if (done) return;
      if (ready) reject(new Error(`exited ${code} before ${ready}: ${out.slice(-500)}`));
      else resolve(performance.now() - started);
    });
  });
}

/** `count` processes spinning on a core each (what other builds and tests do to the machine). */
function busy(count: number): ChildProcess[] {
  return Array.from({ length: count }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

const importOnly = `import { register } from 'tsx/esm/api'; register(); await import(${JSON.stringify(join(ROOT, 'bin/cli/demo-run.ts'))});`;

console.log(`vpnhost demo start-up, ${rounds} rounds per load (median ms; ratio to the floor of the same load)`);
for (const load of loads) {
  const spinners = busy(load);
  try {
    const floor: number[] = [];
    const imports: number[] = [];
    const banner: number[] = [];
    for (let i = 0; i < rounds; i++) {
      floor.push(await timeTo(['bin/vpnhost.js', '--help'], null));
      imports.push(await timeTo(['--input-type=module', '-e', importOnly], null));
      const data = mkdtempSync(join(tmpdir(), 'vpnhost-bench-demo-'));
      try {
        banner.push(await timeTo(['bin/vpnhost.js', 'demo', '--data', data, '--panel-listen', '127.0.0.1:0', '--platform-listen', '127.0.0.1:0'], /Stop with Ctrl-C\./));
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    }
    const f = median(floor);
    console.log(`  ${load} busy: floor ${fmt(f, 0)} | import demo code ${fmt(median(imports), 0)} (${fmt(median(imports) / f)}x) | banner ${fmt(median(banner), 0)} (${fmt(median(banner) / f)}x)`);
  } finally {
    for (const p of spinners) p.kill('SIGKILL');
  }
}
