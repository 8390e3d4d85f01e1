// VpnProduct's client-area assets, served locally under `/client/modules/Product/VpnProduct/assets/<file>`: the tabs'
// script (./assets/vpn-client.js) and uPlot (the installed `uplot` package), nothing else.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsync } from 'fastify';

const UPLOT_DIST = dirname(createRequire(import.meta.url).resolve('uplot'));
const OWN = fileURLToPath(new URL('./assets', import.meta.url));

/** File name → path and content type; the only files the route serves. */
const CLIENT_ASSETS: Readonly<Record<string, { path: string; type: string }>> = {
  'vpn-client.js': { path: join(OWN, 'vpn-client.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.iife.min.js': { path: join(UPLOT_DIST, 'uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'uPlot.min.css': { path: join(UPLOT_DIST, 'uPlot.min.css'), type: 'text/css; charset=utf-8' },
};

/** `GET /assets/:file` of the module's client routes (read once, then kept in memory). */
export const clientAssetRoutes: FastifyPluginAsync = async (app) => {
  const cache = new Map<string, Buffer>();
  app.get<{ Params: { file: string } }>('/assets/:file', async (request, reply) => {
    const asset = Object.hasOwn(CLIENT_ASSETS, request.params.file) ? CLIENT_ASSETS[request.params.file] : undefined;
    if (!asset) return reply.code(404).send({ error: 'Not found' });
    let body = cache.get(request.params.file);
    if (!body) {
      body = await readFile(asset.path);
      cache.set(request.params.file, body);
    }
    return reply.type(asset.type).header('cache-control', 'public, max-age=3600').header('x-content-type-options', 'nosniff').send(body);
  });
};
