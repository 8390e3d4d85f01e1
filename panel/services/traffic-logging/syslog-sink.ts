// Sends RFC 5424 lines to a remote syslog server, one UDP datagram per message (RFC 5426).
import { createSocket, type Socket } from 'node:dgram';
import type { BatchSink } from './shipper.ts';

/** UDP syslog sink: every line one datagram to `host:port`; rejects when a datagram cannot be handed to the kernel. */
export class SyslogUdpSink implements BatchSink<string> {
  readonly name = 'syslog';
  private socket: Socket | null = null;

  constructor(private readonly host: string, private readonly port: number) {}

  private open(): Socket {
    if (!this.socket) {
      const socket = createSocket('udp4');
      socket.on('error', () => undefined); // ICMP errors of earlier datagrams; the next send reports its own failure
      socket.unref();
      this.socket = socket;
    }
    return this.socket;
  }

  async send(batch: string[]): Promise<void> {
    const socket = this.open();
    for (const line of batch) {
      await new Promise<void>((resolve, reject) => socket.send(Buffer.from(line, 'utf8'), this.port, this.host, (err) => (err ? reject(err) : resolve())));
    }
  }

  async close(): Promise<void> {
    const socket = this.socket;
    this.socket = null;
    if (socket) await new Promise<void>((resolve) => socket.close(() => resolve()));
  }
}
