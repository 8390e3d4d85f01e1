// Tiny TCP/UDP services and probes run by node inside test namespaces (no nc/socat needed).
import { execa, type ResultPromise } from 'execa';

const SERVER = `
const [proto, host, port, tag] = process.argv.slice(1);
if (proto === 'tcp') {
  const s = require('net').createServer((c) => c.end(tag + ' ' + c.remoteAddress.replace('::ffff:', '') + '\\n'));
  s.listen(Number(port), host, () => console.log('ready'));
} else {
  const s = require('dgram').createSocket(host.includes(':') ? 'udp6' : 'udp4');
  s.on('message', (m, r) => s.send(tag + ' ' + r.address, r.port, r.address));
  s.bind(Number(port), host, () => console.log('ready'));
}`;

const PROBE = `
const [proto, host, port, ms, localPort] = process.argv.slice(1);
const done = (text) => { console.log(text); process.exit(0); };
setTimeout(() => done('FAIL timeout'), Number(ms));
if (proto === 'tcp') {
  let data = '';
  const c = require('net').connect(Number(port), host);
  c.on('data', (d) => (data += d));
  c.on('end', () => done(data.trim()));
  c.on('error', (e) => done('FAIL ' + e.code));
} else {
  const s = require('dgram').createSocket(host.includes(':') ? 'udp6' : 'udp4');
  s.on('message', (m) => done(String(m)));
  s.bind(Number(localPort || 0), () => s.send('ping', Number(port), host));
}`;

/** A running service; `stop()` kills it. */
export interface Service {
  stop(): void;
}

/**
 * Starts a service in `ns` on `host:port`: TCP answers `<tag> <peer address>` and closes; UDP echoes
 * `<tag> <peer address>` back. Resolves once it listens.
 */
export async function startService(ns: string, proto: 'tcp' | 'udp', host: string, port: number, tag: string): Promise<Service> {
  const child: ResultPromise = execa('ip', ['netns', 'exec', ns, process.execPath, '-e', SERVER, proto, host, String(port), tag], {
    reject: false,
    stdin: 'ignore',
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service ${proto} ${host}:${port} in ${ns} did not start`)), 10_000);
    child.stdout?.on('data', (d: Buffer) => {
      if (String(d).includes('ready')) {
        clearTimeout(timer);
        resolve();
      }
    });
    void child.then((r) => {
      clearTimeout(timer);
      reject(new Error(`service ${proto} ${host}:${port} in ${ns} exited: ${String(r.stderr)}`));
    });
  });
  return { stop: () => void child.kill('SIGKILL') };
}

/**
 * Connects from `ns` to `host:port`; answers the service's reply, or `FAIL <reason>` (timeout, refused). A UDP
 * probe may send from a fixed `localPort` (the same flow as an earlier probe, for conntrack tests).
 */
export async function probe(ns: string, proto: 'tcp' | 'udp', host: string, port: number, timeoutMs = 1500, localPort = 0): Promise<string> {
  const argv = [PROBE, proto, host, String(port), String(timeoutMs), String(localPort)];
  const result = await execa('ip', ['netns', 'exec', ns, process.execPath, '-e', ...argv], {
    reject: false,
    stdin: 'ignore',
    timeout: timeoutMs + 10_000,
  });
  return String(result.stdout).trim() || `FAIL ${String(result.stderr).trim()}`;
}
