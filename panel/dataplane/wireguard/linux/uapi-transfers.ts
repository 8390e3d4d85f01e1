// Reads a wireguard-go interface's transfer counters straight from its UAPI socket: no `wg` process.
import { connect } from 'node:net';
import { parseWgUapiTransfers } from '../../render/parse-wg-uapi-transfers.ts';
import type { PeerTransfers } from '../../render/parse-wg-transfers.ts';
import { UAPI_DIR, uapiSocketPath } from './uapi-socket.ts';

const NL = 0x0a;

/**
 * Sends `get=1\n\n` to `/var/run/wireguard/<iface>.sock` (the path is the same from every network namespace: wg finds
 * wireguard-go's interfaces this way too) and returns the raw answer, up to and including the closing empty line.
 * Null when no daemon serves the interface (no socket file, or nobody accepts on it: a kernel interface, a missing
 * one, or a daemon that died); throws on a timeout or a connection cut before the answer ended.
 */
export function readUapiAnswer(iface: string, opts: { dir?: string; timeoutMs?: number } = {}): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(uapiSocketPath(iface, opts.dir ?? UAPI_DIR));
    const chunks: Buffer[] = [];
    let length = 0;
    let settled = false;
    const done = (error: Error | null, value: Buffer | null = null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) reject(error);
      else resolve(value);
    };
    const timeoutMs = opts.timeoutMs ?? 30_000; // as long as the runner gives `wg show`
    const timer = setTimeout(() => done(new Error(`UAPI get of ${iface}: no answer within ${timeoutMs} ms`)), timeoutMs);
    socket.once('connect', () => socket.write('get=1\n\n'));
    socket.on('data', (chunk: Buffer) => {
      // the answer's only empty line is its last: it ends when the stream's last two bytes are newlines
      const before = chunk.length > 1 ? chunk[chunk.length - 2] : chunks.at(-1)?.at(-1);
      chunks.push(chunk);
      length += chunk.length;
      if (chunk.at(-1) === NL && before === NL) done(null, Buffer.concat(chunks, length));
    });
    socket.once('end', () => done(new Error(`UAPI get of ${iface}: connection closed before the answer ended`)));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') done(null, null);
      else done(error);
    });
  });
}

/**
 * The transfer counters of a wireguard-go interface read over its UAPI socket (see {@link readUapiAnswer} and
 * {@link parseWgUapiTransfers}); null when no daemon serves `iface` there.
 */
export async function readUapiTransfers(iface: string, opts: { dir?: string; timeoutMs?: number } = {}): Promise<PeerTransfers | null> {
  const answer = await readUapiAnswer(iface, opts);
  return answer && parseWgUapiTransfers(answer);
}
