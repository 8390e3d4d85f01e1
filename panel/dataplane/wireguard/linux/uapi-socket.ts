// wireguard-go's UAPI sockets in the shared /var/run/wireguard: held by a live daemon, or left behind by a dead one.
import { lstat, unlink } from 'node:fs/promises';
import { connect } from 'node:net';

/** Where wireguard-go puts its UAPI sockets (one directory shared by every network namespace). */
export const UAPI_DIR = '/var/run/wireguard';

/** `absent`: no file; `live`: a daemon accepts on it; `stale`: a file nobody answers on (its daemon died). */
export type UapiSocketState = 'absent' | 'live' | 'stale';

/** Path of the UAPI socket of interface `name`. */
export function uapiSocketPath(name: string, dir = UAPI_DIR): string {
  return `${dir}/${name}.sock`;
}

/**
 * Probes a UAPI socket by connecting to it (the daemon accepts and we hang up at once; nothing is sent). Refused
 * (ECONNREFUSED: no process listens, e.g. after `kill -9`) or not a socket → `stale`. A timeout or any other error
 * counts as `live`: a name is only ever taken over when its owner is provably gone.
 */
export async function probeUapiSocket(path: string, timeoutMs = 1000): Promise<UapiSocketState> {
  try {
    if (!(await lstat(path)).isSocket()) return 'stale';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
  return new Promise<UapiSocketState>((resolve) => {
    const socket = connect(path);
    const done = (state: UapiSocketState) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(state);
    };
    const timer = setTimeout(() => done('live'), timeoutMs);
    socket.once('connect', () => done('live'));
    socket.once('error', (error: NodeJS.ErrnoException) => {
      done(error.code === 'ECONNREFUSED' ? 'stale' : error.code === 'ENOENT' ? 'absent' : 'live');
    });
  });
}

/** Removes a stale socket file; a file already gone is fine. */
export async function removeStaleSocket(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}
