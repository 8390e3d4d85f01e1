// Module admin routes under `/admin/modules/<Type>/<ModuleName>/<uri>`: the route entry's permission is checked with
// hasPermission (403 `Insufficient permissions`: a page for web routes, JSON for API routes), then its controller runs.
// A web controller answering a string gets it rendered inside the admin layout (sidebar with the route active).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ModuleRequest, ModuleResponse } from '../../../contract/http.ts';
import { HttpError, INSUFFICIENT_PERMISSIONS, NOT_FOUND } from '../../errors.ts';
import { adminPage, csrfToken, wantsHtml, type AdminPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';

const PARAMS = z.object({ type: z.string().regex(/^[A-Za-z]+$/), name: z.string().regex(/^[A-Za-z][A-Za-z0-9_]*$/), '*': z.string().max(1000) });

/** The module's view of the request; `csrf` is the session's token for the `_csrf` field of the page's forms. */
function toModuleRequest(request: FastifyRequest, reply: FastifyReply): ModuleRequest {
  const admin = request.admin!;
  return {
    method: request.method,
    headers: { ...request.headers },
    query: { ...(request.query as Record<string, unknown>) },
    body: request.body ?? null,
    ip: request.ip,
    admin: { email: admin.email, hasPermission: (key: string) => admin.hasPermission(key) },
    csrf: request.viaToken ? undefined : csrfToken(reply),
  };
}

async function refuse(deps: ModuleAdminRoutesDeps, request: FastifyRequest, reply: FastifyReply, kind: 'api' | 'web', current: { type: string; name: string; route: { name?: string; uri?: string } }): Promise<FastifyReply> {
  if (kind === 'web' && wantsHtml(request)) {
    return adminPage(deps, request, reply, 'forbidden', { title: INSUFFICIENT_PERMISSIONS, message: INSUFFICIENT_PERMISSIONS }, current, 403);
  }
  return reply.code(403).send({ error: INSUFFICIENT_PERMISSIONS });
}

/** Registers the dispatcher (inside the admin scope: `request.admin` is set, CSRF checked for unsafe methods). */
/** What the modules' own admin routes reach: the module admin (routes of the mounted modules). */
export type ModuleAdminRoutesDeps = AdminPageDeps & Pick<WebDeps, 'moduleAdmin'>;

export function moduleAdminRoutes(deps: ModuleAdminRoutesDeps, app: FastifyInstance): void {
  app.route<{ Params: { type: string; name: string; '*': string } }>({
    method: ['GET', 'POST', 'PUT', 'DELETE'],
    url: '/modules/:type/:name/*',
    schema: { params: PARAMS },
    handler: async (request, reply) => {
      const { type, name } = request.params;
      const path = request.params['*'];
      const found = deps.moduleAdmin.findModuleRoute(type, name, request.method, path);
      if (!found) throw new HttpError(404, `${NOT_FOUND}: ${request.method} /admin/modules/${type}/${name}/${path}`);
      const current = { type, name, route: { name: found.route.name, uri: found.route.uri } };
      if (!request.admin!.hasPermission(found.route.permission)) return refuse(deps, request, reply, found.kind, current);
      let answer: ModuleResponse;
      try {
        answer = await found.invoke(toModuleRequest(request, reply));
      } catch (error) {
        if ((error as { statusCode?: number }).statusCode === 403) return refuse(deps, request, reply, found.kind, current);
        throw error;
      }
      if (found.kind === 'web' && typeof answer.body === 'string' && !answer.headers?.['content-type']) {
        return adminPage(deps, request, reply, 'module-page', { title: `${name}`, html: answer.body }, current, answer.status);
      }
      reply.code(answer.status);
      for (const [key, value] of Object.entries(answer.headers ?? {})) reply.header(key, value);
      return reply.send(answer.body ?? null);
    },
  });
}
