// HTTP client of the platform's worker API: one undici keep-alive pool, bearer token, timeouts, zod-checked answers.
import { Pool } from 'undici';
import type { z } from 'zod';

/** Options of `WorkerApiClient`. */
export interface WorkerApiClientOptions {
  /** Platform base URL, e.g. `https://platform.internal:8090` (a path prefix is kept). */
  url: string;
  /** A worker-scope token (`vpnhost platform worker-token create`). */
  token: string;
  /** Keep-alive sockets to the platform, default 16. */
  connections?: number;
  connectTimeoutMs?: number;
  /** Whole-request deadline (headers and body), default 30 s. */
  requestTimeoutMs?: number;
}

/** An answer other than the one expected (status ≥ 400, or a body the schema refuses); never carries a secret. */
export class WorkerApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = 'WorkerApiError';
  }
}

export const WORKER_API_UNREACHABLE = 'platform worker API unreachable';
export const WORKER_API_BAD_ANSWER = 'platform worker API answered an unexpected body';

type Method = 'GET' | 'POST' | 'PUT';

/**
 * Calls `/api/worker/*` of one platform. GET and PUT (idempotent) are tried a second time after a connection
 * error; POSTs are not, their outcome being conditional on the record's state (the queue's retries cover them).
 * Error texts name the method, the path and the platform's `error` text — never the token or a body.
 */
export class WorkerApiClient {
  private readonly pool: Pool;
  private readonly base: string;
  private readonly authorization: string;
  private readonly timeoutMs: number;

  constructor(opts: WorkerApiClientOptions) {
    const url = new URL(opts.url);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`--platform-url must be http(s)://HOST:PORT, got '${url.protocol}'`);
    if (!/^vpw_[0-9a-f]{64}$/.test(opts.token)) throw new Error('the worker token must be a worker token (vpw_…, from `vpnhost platform worker-token create`)');
    this.timeoutMs = opts.requestTimeoutMs ?? 30_000;
    this.pool = new Pool(url.origin, {
      connections: opts.connections ?? 16,
      connectTimeout: opts.connectTimeoutMs ?? 10_000,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      keepAliveTimeout: 30_000,
    });
    this.base = `${url.pathname.replace(/\/+$/, '')}/api/worker`;
    this.authorization = `Bearer ${opts.token}`;
  }

  /** Calls `method path` and answers the body parsed by `schema`; rejects with WorkerApiError on any other answer. */
  async call<T>(method: Method, path: string, schema: z.ZodType<T>, body?: unknown): Promise<T> {
    const answer = await this.send(method, path, body);
    if (answer.status >= 400) throw new WorkerApiError(answer.status, `${method} ${path}: ${answer.status} ${errorText(answer.text)}`);
    return parse(method, path, schema, answer.text);
  }

  /** Like `call`, but a 404 answers null (unknown task, service, product or panel). */
  async find<T>(path: string, schema: z.ZodType<T>): Promise<T | null> {
    const answer = await this.send('GET', path);
    if (answer.status === 404) return null;
    if (answer.status >= 400) throw new WorkerApiError(answer.status, `GET ${path}: ${answer.status} ${errorText(answer.text)}`);
    return parse('GET', path, schema, answer.text);
  }

  /** A call answered 2xx with no body of interest (204). */
  async send204(method: Method, path: string, body: unknown): Promise<void> {
    const answer = await this.send(method, path, body);
    if (answer.status >= 400) throw new WorkerApiError(answer.status, `${method} ${path}: ${answer.status} ${errorText(answer.text)}`);
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private async send(method: Method, path: string, body?: unknown): Promise<{ status: number; text: string }> {
    const tries = method === 'POST' ? 1 : 2;
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.pool.request({
          method,
          path: this.base + path,
          headers: {
            authorization: this.authorization,
            accept: 'application/json',
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        return { status: res.statusCode, text: await res.body.text() };
      } catch (error) {
        if (attempt >= tries) {
          throw new WorkerApiError(0, `${WORKER_API_UNREACHABLE}: ${method} ${path}: ${error instanceof Error ? error.message : String(error)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }
}

function parse<T>(method: Method, path: string, schema: z.ZodType<T>, text: string): T {
  let json: unknown;
  try {
    json = text === '' ? null : JSON.parse(text);
  } catch {
    throw new WorkerApiError(0, `${WORKER_API_BAD_ANSWER} for ${method} ${path}: not JSON`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new WorkerApiError(0, `${WORKER_API_BAD_ANSWER} for ${method} ${path}: ${issue ? `${issue.path.join('.') || 'body'}: ${issue.message}` : 'invalid'}`);
  }
  return parsed.data;
}

/** The platform's `{error}` text (bounded), or a generic one. */
function errorText(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error.slice(0, 500);
  } catch {
    // not JSON: fall through
  }
  return 'error';
}
