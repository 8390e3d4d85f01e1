// Many WireGuard clients in one process, for benches: each does one real handshake (Noise_IKpsk2, WireGuard's message
// formats) with a server and sends a keepalive, so the server lists it online with an endpoint — 50,000 peers without
// 50,000 interfaces.
import {
  createCipheriv, createDecipheriv, createHash, createHmac, createPrivateKey, createPublicKey, diffieHellman, randomBytes, randomInt,
  type KeyObject,
} from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { x25519PublicKey } from '../../panel/dataplane/x25519.ts';
import { blake2s } from './blake2s.ts';

/** A client's static key pair: the private key object and the base64 public key the server's peer is given. */
export interface WgClientKeys {
  privateKey: KeyObject;
  publicKey: string;
}

/**
 * `n` fresh x25519 key pairs. Not through generateKeyPairSync and a JWK export, which deadlocks Node 20's thread now
 * and then (see panel/dataplane/keys.ts): random private keys, their public keys in plain JavaScript (about 1 ms
 * each), and key objects imported from JWK.
 */
export function wgClientKeys(n: number): WgClientKeys[] {
  return Array.from({ length: n }, () => {
    const { key, publicKey } = keyPair();
    return { privateKey: key, publicKey: publicKey.toString('base64') };
  });
}

/** A random x25519 private key as a key object (imported from JWK) and its raw public key. */
function keyPair(): { key: KeyObject; publicKey: Buffer } {
  const raw = randomBytes(32);
  const publicKey = x25519PublicKey(raw);
  const key = createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: raw.toString('base64url'), x: publicKey.toString('base64url') }, format: 'jwk' });
  return { key, publicKey };
}

const CONSTRUCTION = Buffer.from('Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s');
const IDENTIFIER = Buffer.from('WireGuard v1 zx2c4 Jason@zx2c4.com');
const LABEL_MAC1 = Buffer.from('mac1----');
const TAI64_BASE = 0x400000000000000an;

const hash = (...parts: Buffer[]): Buffer => {
  const h = createHash('blake2s256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const hmac = (key: Buffer, ...parts: Buffer[]): Buffer => {
  const h = createHmac('blake2s256', key);
  for (const p of parts) h.update(p);
  return h.digest();
};
/** WireGuard's KDF_n: HKDF over HMAC-BLAKE2s. */
function kdf(key: Buffer, input: Buffer, n: 1 | 2 | 3): Buffer[] {
  const t0 = hmac(key, input);
  const out: Buffer[] = [];
  let prev: Buffer = Buffer.alloc(0);
  for (let i = 1; i <= n; i++) out.push((prev = hmac(t0, prev, Buffer.from([i]))));
  return out;
}
const nonce = (counter: number): Buffer => {
  const n = Buffer.alloc(12);
  n.writeBigUInt64LE(BigInt(counter), 4);
  return n;
};
function seal(key: Buffer, counter: number, plain: Buffer, ad: Buffer): Buffer {
  const c = createCipheriv('chacha20-poly1305', key, nonce(counter), { authTagLength: 16 });
  c.setAAD(ad, { plaintextLength: plain.length });
  return Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
}
function open(key: Buffer, counter: number, sealed: Buffer, ad: Buffer): Buffer {
  const d = createDecipheriv('chacha20-poly1305', key, nonce(counter), { authTagLength: 16 });
  d.setAAD(ad, { plaintextLength: sealed.length - 16 });
  d.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([d.update(sealed.subarray(0, sealed.length - 16)), d.final()]);
}
const publicKeyObject = (raw: Buffer): KeyObject =>
  createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: raw.toString('base64url') }, format: 'jwk' });
const dh = (privateKey: KeyObject, publicKey: KeyObject): Buffer => diffieHellman({ privateKey, publicKey });

/** The initiator's state between its initiation and the server's response. */
interface Pending {
  client: WgClientKeys;
  chain: Buffer;
  hash: Buffer;
}

/**
 * The ephemeral key of every initiation of one {@link handshakeAll} (a responder keeps no record of ephemerals; a
 * bench saves a key generation per handshake) and its shared secret with the server.
 */
interface Ephemeral {
  key: KeyObject;
  publicKey: Buffer;
  withServer: Buffer;
}

/** A handshake initiation (message type 1, 148 bytes) of `client` to the server, and the state to finish it. */
function initiation(client: WgClientKeys, server: Buffer, serverKey: KeyObject, eph: Ephemeral, sender: number): { message: Buffer; state: Pending } {
  const message = Buffer.alloc(148);
  message[0] = 1;
  message.writeUInt32LE(sender, 4);
  let chain = hash(CONSTRUCTION);
  let h = hash(hash(chain, IDENTIFIER), server);
  [chain] = kdf(chain, eph.publicKey, 1);
  eph.publicKey.copy(message, 8);
  h = hash(h, eph.publicKey);
  let key: Buffer;
  [chain, key] = kdf(chain, eph.withServer, 2);
  const sealedStatic = seal(key, 0, Buffer.from(client.publicKey, 'base64'), h);
  sealedStatic.copy(message, 40);
  h = hash(h, sealedStatic);
  [chain, key] = kdf(chain, dh(client.privateKey, serverKey), 2);
  const now = Date.now();
  const stamp = Buffer.alloc(12);
  stamp.writeBigUInt64BE(TAI64_BASE + BigInt(Math.floor(now / 1000)), 0);
  stamp.writeUInt32BE((now % 1000) * 1_000_000, 8);
  const sealedStamp = seal(key, 0, stamp, h);
  sealedStamp.copy(message, 88);
  h = hash(h, sealedStamp);
  blake2s(message.subarray(0, 116), hash(LABEL_MAC1, server), 16).copy(message, 116);
  return { message, state: { client, chain, hash: h } };
}

/** From the server's response (type 2, 92 bytes): the keepalive (type 4) that confirms the session to the server. */
function keepaliveAfter(response: Buffer, state: Pending, eph: Ephemeral): Buffer {
  const responderIndex = response.readUInt32LE(4);
  const ephemeral = response.subarray(12, 44);
  const ephemeralKey = publicKeyObject(Buffer.from(ephemeral));
  let [chain] = kdf(state.chain, ephemeral, 1);
  let h = hash(state.hash, ephemeral);
  [chain] = kdf(chain, dh(eph.key, ephemeralKey), 1);
  [chain] = kdf(chain, dh(state.client.privateKey, ephemeralKey), 1);
  const [next, tau, key] = kdf(chain, Buffer.alloc(32), 3);
  h = hash(h, tau);
  open(key, 0, response.subarray(44, 60), h);
  const [sending] = kdf(next, Buffer.alloc(0), 2);
  const keepalive = Buffer.alloc(32);
  keepalive[0] = 4;
  keepalive.writeUInt32LE(responderIndex, 4);
  seal(sending, 0, Buffer.alloc(0), Buffer.alloc(0)).copy(keepalive, 16);
  return keepalive;
}

/** Options of {@link handshakeAll}. */
export interface HandshakeOptions {
  /** The server's address, UDP port and base64 public key. */
  host: string;
  port: number;
  serverPublicKey: string;
  clients: WgClientKeys[];
  /**
   * Handshakes in flight at once. wireguard-go asks for cookies once 128 initiations wait in its queue, so stay
   * below that.
   */
  inFlight?: number;
  /** An initiation without a response is sent again after this long (a new one), at most `tries` times. */
  retryMs?: number;
  tries?: number;
  /** Local addresses to send from, round robin (a server lists each peer with the endpoint it last heard from). */
  bind?: string[];
}

/**
 * Has every client do one handshake with the server and send a keepalive (after which the server records the
 * handshake: wireguard-go stamps a responder's handshake when the first packet under the new keys arrives). Resolves
 * with how many completed; the sockets are closed.
 */
export async function handshakeAll(opts: HandshakeOptions): Promise<number> {
  const server = Buffer.from(opts.serverPublicKey, 'base64');
  const serverKey = publicKeyObject(server);
  const pair = keyPair();
  const eph: Ephemeral = { ...pair, withServer: dh(pair.key, serverKey) };
  const inFlight = opts.inFlight ?? 64;
  const retryMs = opts.retryMs ?? 2000;
  const tries = opts.tries ?? 4;
  const sockets: Socket[] = await Promise.all((opts.bind ?? ['0.0.0.0']).map((address) => new Promise<Socket>((resolve, reject) => {
    const s = createSocket('udp4');
    s.once('error', reject);
    s.bind({ address, port: 0 }, () => resolve(s));
  })));
  const pending = new Map<number, { state: Pending; index: number; sentAt: number; socket: Socket }>();
  const attempts = new Uint8Array(opts.clients.length);
  let next = 0;
  let done = 0;
  let failed = 0;
  let settle: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (settle = resolve));
  const send = (index: number) => {
    attempts[index]++;
    let sender = randomInt(1, 0xffffffff);
    while (pending.has(sender)) sender = randomInt(1, 0xffffffff);
    const socket = sockets[index % sockets.length];
    const { message, state } = initiation(opts.clients[index], server, serverKey, eph, sender);
    pending.set(sender, { state, index, sentAt: performance.now(), socket });
    socket.send(message, opts.port, opts.host);
  };
  const fill = () => {
    while (pending.size < inFlight && next < opts.clients.length) send(next++);
    if (pending.size === 0 && next >= opts.clients.length) settle();
  };
  for (const socket of sockets) {
    socket.on('message', (msg) => {
      if (msg.length !== 92 || msg[0] !== 2) return; // cookie replies and the rest: the retry timer sends again
      const entry = pending.get(msg.readUInt32LE(8));
      if (!entry) return;
      pending.delete(msg.readUInt32LE(8));
      try {
        entry.socket.send(keepaliveAfter(msg, entry.state, eph), opts.port, opts.host);
        done++;
      } catch {
        failed++;
      }
      fill();
    });
  }
  const timer = setInterval(() => {
    const now = performance.now();
    for (const [sender, entry] of pending) {
      if (now - entry.sentAt < retryMs) continue;
      pending.delete(sender);
      if (attempts[entry.index] < tries) send(entry.index);
      else failed++;
    }
    fill();
  }, Math.max(50, retryMs / 4));
  try {
    fill();
    await finished;
  } finally {
    clearInterval(timer);
    await Promise.all(sockets.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
  return done;
}
