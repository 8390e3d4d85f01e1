// One JSON access line per request, written without the redaction pass: its fields are chosen to hold no secret.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** Path segments that carry a secret in the URL itself (one-time-link keys). */
const SECRET_PATH = /^(\/otl\/)[^/?#]+/;

/** URL as logged: secrets in the path masked, the query string kept. */
export function loggableUrl(url: string): string {
  return url.replace(SECRET_PATH, '$1[redacted]');
}

/**
 * Logs `{reqId, method, url, statusCode, responseTime, remoteAddress}` at info when each response is sent. The
 * cookie, headers and bodies are never part of the line, so the logger's redaction (costly per line) is skipped.
 */
export function addAccessLog(app: FastifyInstance, logger: Logger): void {
  if (!logger.isLevelEnabled('info')) return;
  const access = logger.child({ part: 'access' }, { redact: { paths: [], censor: '' } });
  app.addHook('onResponse', (request, reply, done) => {
    access.info(
      {
        reqId: request.id,
        method: request.method,
        url: loggableUrl(request.url),
        statusCode: reply.statusCode,
        responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
        remoteAddress: request.ip,
      },
      'request',
    );
    done();
  });
}
