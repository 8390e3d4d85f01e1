// Answers HTTP-level client errors (unparseable requests, oversized headers) with the envelope before closing.
import type { Socket } from 'node:net';
import { fail } from './envelope.ts';
import { OWN } from './errors.ts';

const STATUS_LINES: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

/** Fastify `clientErrorHandler`: writes a 400/408/431 envelope on a request node's parser refused, then closes. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy(err);
    return;
  }
  const status = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const body = JSON.stringify(fail(OWN.BAD_REQUEST));
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_LINES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
