// A small typed client of strongSwan's vici protocol (unix socket): encode/decode messages, commands, streamed events.
import { createConnection, type Socket } from 'node:net';
import { IpsecError } from '../ipsec.ts';

/** A vici message: sections (objects), key/values (strings) and lists (string arrays). */
export interface ViciTree {
  [key: string]: ViciValue;
}
export type ViciValue = string | string[] | ViciTree;

const enum Elem { SectionStart = 1, SectionEnd = 2, KeyValue = 3, ListStart = 4, ListItem = 5, ListEnd = 6 }
const enum Packet { CmdRequest = 0, CmdResponse = 1, CmdUnknown = 2, EventRegister = 3, EventUnregister = 4, EventConfirm = 5, EventUnknown = 6, Event = 7 }

function nameBytes(name: string): Buffer {
  const b = Buffer.from(name, 'utf8');
  if (b.length > 255) throw new IpsecError(`vici: name too long: ${name.slice(0, 40)}`);
  return Buffer.concat([Buffer.from([b.length]), b]);
}
function valueBytes(value: string): Buffer {
  const b = Buffer.from(value, 'utf8');
  if (b.length > 65535) throw new IpsecError('vici: value too long');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
}

/** Encodes a message tree (vici README "Message format"). */
export function encodeMessage(tree: ViciTree): Buffer {
  const out: Buffer[] = [];
  const walk = (t: ViciTree) => {
    for (const [key, value] of Object.entries(t)) {
      if (typeof value === 'string') out.push(Buffer.from([Elem.KeyValue]), nameBytes(key), valueBytes(value));
      else if (Array.isArray(value)) {
        out.push(Buffer.from([Elem.ListStart]), nameBytes(key));
        for (const item of value) out.push(Buffer.from([Elem.ListItem]), valueBytes(item));
        out.push(Buffer.from([Elem.ListEnd]));
      } else {
        out.push(Buffer.from([Elem.SectionStart]), nameBytes(key));
        walk(value);
        out.push(Buffer.from([Elem.SectionEnd]));
      }
    }
  };
  walk(tree);
  return Buffer.concat(out);
}

/** Decodes a message (the inverse of {@link encodeMessage}); throws on a malformed one. */
export function decodeMessage(buf: Buffer): ViciTree {
  const root: ViciTree = {};
  const stack: ViciTree[] = [root];
  let list: string[] | null = null;
  let i = 0;
  const need = (n: number) => {
    if (i + n > buf.length) throw new IpsecError('vici: truncated message');
  };
  const readName = () => {
    need(1);
    const n = buf[i++];
    need(n);
    const s = buf.toString('utf8', i, i + n);
    i += n;
    return s;
  };
  const readValue = () => {
    need(2);
    const n = buf.readUInt16BE(i);
    i += 2;
    need(n);
    const s = buf.toString('utf8', i, i + n);
    i += n;
    return s;
  };
  while (i < buf.length) {
    const type = buf[i++];
    const top = stack[stack.length - 1];
    switch (type) {
      case Elem.SectionStart: {
        const child: ViciTree = {};
        top[readName()] = child;
        stack.push(child);
        break;
      }
      case Elem.SectionEnd:
        if (stack.length === 1) throw new IpsecError('vici: unbalanced section');
        stack.pop();
        break;
      case Elem.KeyValue: {
        const key = readName();
        top[key] = readValue();
        break;
      }
      case Elem.ListStart:
        list = [];
        top[readName()] = list;
        break;
      case Elem.ListItem:
        if (!list) throw new IpsecError('vici: list item outside a list');
        list.push(readValue());
        break;
      case Elem.ListEnd:
        list = null;
        break;
      default:
        throw new IpsecError(`vici: unknown element ${type}`);
    }
  }
  return root;
}

function packet(type: Packet, name: string | null, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = name === null ? Buffer.from([type]) : Buffer.concat([Buffer.from([type]), nameBytes(name)]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(head.length + body.length);
  return Buffer.concat([len, head, body]);
}

/** One received packet. */
interface Received {
  type: number;
  name: string | null;
  body: Buffer;
}

/**
 * One vici session on `socketPath`. Commands run one at a time (the protocol answers in order). Each call of
 * {@link ViciClient.open} connects; {@link ViciSession.close} ends it.
 */
export class ViciSession {
  private buffer = Buffer.alloc(0);
  private readonly queue: Received[] = [];
  private waiter: ((p: Received | Error) => void) | null = null;
  private failure: Error | null = null;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(new IpsecError(`vici: ${err.message}`)));
    socket.on('close', () => this.fail(new IpsecError('vici: connection closed')));
  }

  /** Connects to the daemon's vici socket (fails fast when nothing listens). */
  static connect(socketPath: string, timeoutMs = 10_000): Promise<ViciSession> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(socketPath);
      socket.setTimeout(timeoutMs, () => socket.destroy(new Error('timeout')));
      socket.once('connect', () => resolve(new ViciSession(socket)));
      socket.once('error', (err) => reject(new IpsecError(`vici: ${err.message}`)));
    });
  }

  /** Runs command `name` with `args`; answers the response tree (`success = no` is NOT turned into an error here). */
  async request(name: string, args: ViciTree = {}): Promise<ViciTree> {
    this.socket.write(packet(Packet.CmdRequest, name, encodeMessage(args)));
    for (;;) {
      const p = await this.next();
      if (p.type === Packet.CmdResponse) return decodeMessage(p.body);
      if (p.type === Packet.CmdUnknown) throw new IpsecError(`vici: unknown command ${name}`);
    }
  }

  /**
   * Runs several commands pipelined (all written at once, answers read in order: vici answers one connection's
   * requests in sequence); each must answer `success = yes`. Saves the round trips of one account's three loads.
   */
  async commands(list: Array<[string, ViciTree]>): Promise<ViciTree[]> {
    this.socket.write(Buffer.concat(list.map(([name, args]) => packet(Packet.CmdRequest, name, encodeMessage(args)))));
    const out: ViciTree[] = [];
    let failure: IpsecError | null = null;
    for (const [name] of list) {
      let res: ViciTree | null = null;
      while (!res) {
        const p = await this.next();
        if (p.type === Packet.CmdResponse) res = decodeMessage(p.body);
        else if (p.type === Packet.CmdUnknown) {
          res = {};
          failure ??= new IpsecError(`vici: unknown command ${name}`);
        }
      }
      if (res.success !== undefined && res.success !== 'yes') {
        failure ??= new IpsecError(`${name}: ${typeof res.errmsg === 'string' ? res.errmsg : 'failed'}`);
      }
      out.push(res);
    }
    if (failure) throw failure;
    return out;
  }

  /** Runs `name` and collects the `event` messages streamed before its response (e.g. list-sas → list-sa). */
  async stream(name: string, event: string, args: ViciTree = {}): Promise<{ events: ViciTree[]; response: ViciTree }> {
    this.socket.write(packet(Packet.EventRegister, event));
    const confirm = await this.next();
    if (confirm.type !== Packet.EventConfirm) throw new IpsecError(`vici: event ${event} not confirmed`);
    this.socket.write(packet(Packet.CmdRequest, name, encodeMessage(args)));
    const events: ViciTree[] = [];
    for (;;) {
      const p = await this.next();
      if (p.type === Packet.Event && p.name === event) events.push(decodeMessage(p.body));
      else if (p.type === Packet.CmdResponse) {
        const response = decodeMessage(p.body);
        this.socket.write(packet(Packet.EventUnregister, event));
        await this.next();
        return { events, response };
      } else if (p.type === Packet.CmdUnknown) throw new IpsecError(`vici: unknown command ${name}`);
    }
  }

  /** Runs a command that must answer `success = yes`; throws its `errmsg` otherwise. */
  async command(name: string, args: ViciTree = {}): Promise<ViciTree> {
    const res = await this.request(name, args);
    if (res.success !== undefined && res.success !== 'yes') {
      throw new IpsecError(`${name}: ${typeof res.errmsg === 'string' ? res.errmsg : 'failed'}`);
    }
    return res;
  }

  close(): void {
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= 4) {
      const len = this.buffer.readUInt32BE(0);
      if (this.buffer.length < 4 + len) break;
      const body = this.buffer.subarray(4, 4 + len);
      this.buffer = this.buffer.subarray(4 + len);
      const type = body[0];
      const named = type === Packet.Event || type === Packet.CmdRequest || type === Packet.EventRegister || type === Packet.EventUnregister;
      let name: string | null = null;
      let off = 1;
      if (named) {
        name = body.toString('utf8', 2, 2 + body[1]);
        off = 2 + body[1];
      }
      this.push({ type, name, body: body.subarray(off) });
    }
  }

  private push(p: Received): void {
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(p);
    } else this.queue.push(p);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    if (this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      w(err);
    }
  }

  private next(): Promise<Received> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = (p) => (p instanceof Error ? reject(p) : resolve(p));
    });
  }
}
