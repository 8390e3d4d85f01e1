// One JSON access line per request, written without the redaction pass: its fields are chosen to hold no secret.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { loggableUrl } from '../logger.ts';

export { loggableUrl };

/**
 * Logs `{reqId, method, url, statusCode, responseTime, remoteAddress}` at info when each response is sent. The URL is
 * logged without its query values (`?[redacted]`) and with one-time-link keys masked; cookie, headers and bodies are
 * never part of the line, so the logger's redaction (costly per line) is skipped. Info lines are buffered (see
 * `createLogger`): the line costs no write(2) of its own.
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
