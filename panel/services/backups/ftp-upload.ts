// FTP upload of archives with basic-ftp (plain FTP or explicit FTPS), and retention of the archives on the server.
import { basename } from 'node:path';
import { rootCertificates } from 'node:tls';
import { Client } from 'basic-ftp';
import { ownArchivesOldestFirst } from './backup-folder.ts';

/** Where archives go. `ftp_server` `ftps://host` selects explicit FTPS (AUTH TLS); `host` or `ftp://host` plain FTP. */
export interface FtpTarget {
  server: string;
  port: number;
  user: string;
  password: string;
  /** Remote folder (created when missing); '' = the login folder. */
  path: string;
}

/** Uploads archives and prunes old ones on the server. */
export interface FtpUploader {
  /** Uploads `localPath` as `<path>/<basename>` (through `<name>.part`, renamed when complete). */
  upload(target: FtpTarget, localPath: string): Promise<void>;
  /** Keeps the `keep` newest archives this panel made in the remote folder; returns the names removed. */
  prune(target: FtpTarget, keep: number): Promise<string[]>;
}

/** Host and TLS mode of `ftp_server`. */
export function parseFtpServer(server: string): { host: string; secure: boolean } {
  const match = /^(ftps?):\/\/([^/]+)\/?$/i.exec(server.trim());
  if (match) return { host: match[2], secure: match[1].toLowerCase() === 'ftps' };
  return { host: server.trim(), secure: false };
}

/** The real uploader (basic-ftp); each call opens its own connection and closes it. */
export class BasicFtpUploader implements FtpUploader {
  /** `ca`: PEM of CA certificates trusted for FTPS besides Node's bundled roots (a server with its own CA). */
  constructor(private readonly opts: { timeoutMs?: number; ca?: string } = {}) {}

  private async connect(target: FtpTarget): Promise<Client> {
    const client = new Client(this.opts.timeoutMs ?? 15_000);
    const { host, secure } = parseFtpServer(target.server);
    try {
      await client.access({
        host, port: target.port, user: target.user, password: target.password, secure,
        secureOptions: this.opts.ca ? { ca: [...rootCertificates, this.opts.ca] } : {},
      });
      if (target.path) await client.ensureDir(target.path);
      return client;
    } catch (err) {
      client.close();
      throw err;
    }
  }

  async upload(target: FtpTarget, localPath: string): Promise<void> {
    const client = await this.connect(target);
    try {
      const name = basename(localPath);
      await client.uploadFrom(localPath, `${name}.part`);
      await client.rename(`${name}.part`, name);
    } finally {
      client.close();
    }
  }

  async prune(target: FtpTarget, keep: number): Promise<string[]> {
    const client = await this.connect(target);
    try {
      const names = ownArchivesOldestFirst((await client.list()).filter((f) => f.isFile).map((f) => f.name));
      const removed = names.slice(0, Math.max(0, names.length - keep));
      for (const name of removed) await client.remove(name);
      return removed;
    } finally {
      client.close();
    }
  }
}
