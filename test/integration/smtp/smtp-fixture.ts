// A real SMTP server for the Smtp module's tests: smtp-server on 127.0.0.1:0 offering STARTTLS (a self-signed
// certificate made here with node-forge) and AUTH only over TLS; received mails parsed with mailparser; scripted
// failure replies; and a platform with the Smtp module and a short retry backoff.
import { generateKeyPairSync } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import forge from 'node-forge';
import { pino, type Logger } from 'pino';
import { SMTPServer } from 'smtp-server';
import { config, type ModulesConfig } from '../../../config.ts';
import { Platform } from '../../../module/platform/platform.ts';
import { removeDir, tempDir } from '../../fixtures/platform/processes.ts';

/** A self-signed certificate for 127.0.0.1 / localhost (RSA 2048 from node:crypto, certificate built by node-forge). */
export function selfSignedCert(): { key: string; cert: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const keyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicKey.export({ type: 'spki', format: 'pem' }).toString());
  cert.serialNumber = '01' + forge.util.bytesToHex(forge.random.getBytesSync(8));
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000);
  const attrs = [{ name: 'commonName', value: 'localhost' }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 2, value: 'localhost' }, { type: 7, ip: '127.0.0.1' }] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keyPem), forge.md.sha256.create());
  return { key: keyPem, cert: forge.pki.certificateToPem(cert) };
}

/** A reply the server gives instead of accepting, at RCPT TO or at the end of DATA. */
export interface ScriptedReply {
  at: 'rcpt' | 'data';
  code: number;
  text: string;
}

export interface TestSmtpServer {
  port: number;
  cert: string;
  user: string;
  password: string;
  /** Mails accepted, parsed. */
  received: ParsedMail[];
  /** Envelope recipients of each accepted mail. */
  envelopes: string[][];
  /** Whether each session that authenticated had upgraded to TLS first. */
  authOverTls: boolean[];
  /** Replies to give next, in order (consumed one per attempt). */
  script: ScriptedReply[];
  /** Resolves once `count` mails have arrived (bounded). */
  waitForMails(count: number, timeoutMs?: number): Promise<ParsedMail[]>;
  close(): Promise<void>;
}

function smtpError(reply: ScriptedReply): Error {
  return Object.assign(new Error(reply.text), { responseCode: reply.code });
}

/**
 * Starts the server: STARTTLS with `cert`, AUTH PLAIN/LOGIN only after STARTTLS, `user`/`password`. With `noStartTls`
 * the server does not offer STARTTLS (a downgraded or plain relay) and accepts AUTH in clear text.
 */
export async function startSmtpServer(user = 'mailer', password = 'Smtp-Relay-Pass-9931', opts: { noStartTls?: boolean } = {}): Promise<TestSmtpServer> {
  const { key, cert } = selfSignedCert();
  const received: ParsedMail[] = [];
  const envelopes: string[][] = [];
  const authOverTls: boolean[] = [];
  const script: ScriptedReply[] = [];
  const waiters: Array<() => void> = [];
  const take = (at: ScriptedReply['at']) => (script[0]?.at === at ? script.shift()! : null);
  const server = new SMTPServer({
    key, cert,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: opts.noStartTls === true,
    hideSTARTTLS: opts.noStartTls === true,
    disabledCommands: opts.noStartTls === true ? ['STARTTLS'] : [],
    logger: false,
    size: 20 * 1024 * 1024,
    onAuth(auth, session, callback) {
      authOverTls.push(Boolean(session.secure));
      if (auth.username === user && auth.password === password) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const reply = take('rcpt');
      callback(reply ? smtpError(reply) : undefined);
      void address;
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const reply = take('data');
        if (reply) return callback(smtpError(reply));
        simpleParser(Buffer.concat(chunks)).then((parsed) => {
          received.push(parsed);
          envelopes.push(session.envelope.rcptTo.map((r) => r.address));
          callback(null, 'Message queued as test-1');
          for (const wake of waiters.splice(0)) wake();
        }, (error: Error) => callback(error));
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A client that dies mid-session (a platform process SIGKILLed while it sends) resets its connection: smtp-server
  // emits that as 'error', which a mail server shrugs off; without a listener it would be thrown in the test process.
  server.on('error', () => undefined);
  const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address()).port;
  return {
    port, cert, user, password, received, envelopes, authOverTls, script,
    async waitForMails(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} mails, got ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 250));
          waiters.push(() => (clearTimeout(timer), resolve()));
        });
      }
      return received;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** config.ts with the Smtp module's retries made quick (`tries` tries, no backoff). */
export function quickSmtpConfig(tries = 3): ModulesConfig {
  return {
    modules: {
      ...config.modules,
      Notification: { Smtp: { ...config.modules.Notification.Smtp, job: { tries, backoff: 0, timeout: 30 }, smtp_timeout_ms: 5_000 } },
    },
  };
}

/** A platform in a temp data dir with the Smtp module loaded and 2 job slots; every log line kept in `lines`. */
export async function openSmtpPlatform(modulesConfig: ModulesConfig = quickSmtpConfig()): Promise<{ platform: Platform; lines: string[]; logger: Logger; dataDir: string; close(): Promise<void> }> {
  const dataDir = tempDir('smtp');
  const lines: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  const platform = await Platform.open({ dataDir, logger, modulesConfig, queueOptions: { pollMs: 20 }, moduleWatchMs: 0 });
  await platform.startWorkers(2);
  return {
    platform, lines, logger, dataDir,
    async close() {
      await platform.close(2_000);
      removeDir(dataDir);
    },
  };
}
