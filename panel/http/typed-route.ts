// Routes that declare their zod schemas on the route: path params, query, body and the success envelope's `msg`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { ok } from './envelope.ts';
import { parseInput } from './validate.ts';

/**
 * What a route declares: the zod schemas of its path parameters, query and body (each parsed on demand with
 * `parseInput`, so the handler keeps the spec's order of checks and texts), and what it answers: `msg`, the success
 * envelope's content, or `produces`, a content type answered without the envelope (a backup download). The OpenAPI
 * document is generated from these (panel/http/openapi.ts).
 */
export interface RouteSpec<P extends z.ZodType | undefined, Q extends z.ZodType | undefined, B extends z.ZodType | undefined, M extends z.ZodType> {
  params?: P;
  query?: Q;
  body?: B;
  /** `msg` of the success envelope (the handler's result must be of its type). */
  msg: M;
  /** Set for an answer without the envelope (the handler sends it and returns the reply): its content type. */
  produces?: string;
}

type Out<S> = S extends z.ZodType ? z.output<S> : never;

/** What a handler gets: the request's parts parsed by the route's schemas, on demand. */
export interface RouteInput<P, Q, B> {
  params(): Out<P>;
  query(): Out<Q>;
  body(): Out<B>;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** The spec of a registered route, as kept in its `config` (read by the OpenAPI transform and by tests). */
export type AnyRouteSpec = RouteSpec<z.ZodType | undefined, z.ZodType | undefined, z.ZodType | undefined, z.ZodType>;

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
type Add = <P extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, B extends z.ZodType | undefined = undefined, M extends z.ZodType = z.ZodType>(
  url: string,
  spec: RouteSpec<P, Q, B, M>,
  handler: (input: RouteInput<P, Q, B>) => Promise<z.output<M> | FastifyReply> | z.output<M> | FastifyReply,
) => void;

/** The `:name` parameters of a URL. */
function urlParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
}

/** The keys of a zod object schema (empty for anything else). */
function shapeKeys(schema: z.ZodType | undefined): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

/**
 * Typed route registration on `app`: `typed(app).get(url, { params, query, body, msg }, handler)`. The handler
 * returns `msg` (answered as `ok(msg)`) or, for a reply it sent itself, the reply. A URL's `:params` must be
 * exactly the keys of the declared `params` schema: a route that does not declare them fails at registration.
 */
export function typed(app: FastifyInstance): Record<'get' | 'post' | 'put' | 'delete', Add> {
  const add = (method: Method): Add => (url, spec, handler) => {
    const declared = shapeKeys(spec.params).sort().join();
    if (urlParams(url).sort().join() !== declared) {
      throw new Error(`${method} ${url}: path parameters [${urlParams(url).join(', ')}] not declared by its params schema [${declared}]`);
    }
    const parse = (schema: z.ZodType | undefined, value: unknown, part: string) => {
      if (!schema) throw new Error(`${method} ${url}: no ${part} schema declared`);
      return parseInput(schema, value);
    };
    app.route({
      method, url, config: { spec },
      handler: async (request, reply) => {
        const input = {
          params: () => parse(spec.params, request.params, 'params'),
          query: () => parse(spec.query, request.query, 'query'),
          body: () => parse(spec.body, request.body, 'body'),
          request, reply,
        } as RouteInput<never, never, never>;
        const out = await handler(input as never);
        return out === reply ? reply : ok(out);
      },
    });
  };
  return { get: add('GET'), post: add('POST'), put: add('PUT'), delete: add('DELETE') };
}
