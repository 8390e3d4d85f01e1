// Bench (not a test): the admin services list page with 10,000 services (server time per paged page) and the
// client-area overview at 50 concurrent customers (autocannon) next to a bare Fastify page measured in the same run.
//
// Run: `node --import tsx test/bench/platform-web.ts [--services 10000] [--seconds 5]`. In process: the platform on a
// temp SQLite file with the web tests' TabProduct module; the list page is timed through inject() (no socket; the
// time is the server's: session check, COUNT + page query, rendering), the client area over loopback HTTP with
// autocannon (50 connections, each request carrying one of 50 customers' session cookies).
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { Browser, startWebStack } from '../fixtures/web/web-stack.ts';
import { CUSTOMER_COOKIE } from '../../module/platform/web/web-deps.ts';
import { median } from './bench-math.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';

const { values: args } = parseArgs({ options: { services: { type: 'string', default: '10000' }, seconds: { type: 'string', default: '5' } }, strict: true });
const N = Number(args.services);
const SECONDS = Number(args.seconds);
const CUSTOMERS = 50;

async function cannon(url: string, cookies: string[]): Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }> {
  let next = 0;
  const result = await autocannon({
    url, connections: CUSTOMERS, duration: SECONDS,
    requests: [{ setupRequest: (req) => ({ ...req, headers: { ...req.headers, accept: 'text/html', ...(cookies.length ? { cookie: cookies[next++ % cookies.length] } : {}) } }) }],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

async function main(): Promise<void> {
  const stack = await startWebStack();
  try {
    const platform = stack.platform;
    const product = await platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'basic', disk_space: 10, bandwidth: 100 });
    const t0 = performance.now();
    const uuids: string[] = [];
    await platform.store.transaction(async (tx) => {
      const services = new ServiceQueries(tx, platform.box);
      for (let i = 0; i < N; i++) uuids.push((await services.create({ product_uuid: product.uuid, module_name: 'TabProduct', service_data: { domain: `s${i}.example.com`, username: `user_${i}`, notes: null } })).uuid);
    });
    console.log(`filled ${N} services in ${(performance.now() - t0).toFixed(0)} ms`);

    await stack.web.admins.create({ email: 'bench@example.com', password: 'Bench-Pass-1', role: 'Administrator' });
    const admin = new Browser(stack.app);
    await admin.loginAdmin('bench@example.com', 'Bench-Pass-1');
    const pages = Math.ceil(N / 50);
    const cases: Array<[string, string]> = [
      ['page 1', '/admin/services'],
      [`page ${Math.ceil(pages / 2)}`, `/admin/services?page=${Math.ceil(pages / 2)}`],
      [`page ${pages} (last)`, `/admin/services?page=${pages}`],
      ['status filter, page 1', '/admin/services?status=pending'],
      ['search (q), page 1', '/admin/services?q=user_99'],
    ];
    console.log(`\nservices list page (50 rows per page), ${N} services, median of 20 after 3 warm-ups:`);
    for (const [label, url] of cases) {
      const times: number[] = [];
      for (let i = 0; i < 23; i++) {
        const start = performance.now();
        const res = await admin.get(url);
        const ms = performance.now() - start;
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
        if (i >= 3) times.push(ms);
      }
      console.log(`  ${label.padEnd(24)} ${median(times).toFixed(2)} ms`);
    }

    // 50 customers, each owning one service.
    const cookies: string[] = [];
    const urls: string[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const email = `c${i}@example.com`;
      const customer = await stack.web.customers.create({ email, password: 'Customer-Pass-1' });
      await stack.web.customers.queries.assignService(uuids[i], customer.uuid);
      cookies.push(`${CUSTOMER_COOKIE}=${await stack.web.sessions.start('customer', customer.uuid)}`);
      urls.push(`/client/services/${uuids[i]}`);
    }
    await stack.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (stack.app.server.address() as { port: number }).port;
    const check = await fetch(`http://127.0.0.1:${port}${urls[0]}`, { headers: { cookie: cookies[0] } });
    if (check.status !== 200) throw new Error(`client overview answered ${check.status}`);
    // Every connection asks for its own customer's service page: cookie i goes with service i.
    let k = 0;
    const area = await autocannon({
      url: `http://127.0.0.1:${port}`, connections: CUSTOMERS, duration: SECONDS,
      requests: [{ setupRequest: (req) => { const i = k++ % CUSTOMERS; return { ...req, path: urls[i], headers: { ...req.headers, accept: 'text/html', cookie: cookies[i] } }; } }],
    });

    const bare = Fastify();
    const html = `<!doctype html><html><head><title>bare</title></head><body><h1>Service</h1><p>${'x'.repeat(2000)}</p></body></html>`;
    bare.get('/', async (_req, reply) => reply.type('text/html').send(html));
    await bare.listen({ host: '127.0.0.1', port: 0 });
    const floor = await cannon(`http://127.0.0.1:${(bare.server.address() as { port: number }).port}/`, []);
    await bare.close();

    console.log(`\nclient-area overview, ${CUSTOMERS} concurrent customers, ${SECONDS} s (autocannon):`);
    console.log(`  platform  ${area.requests.average.toFixed(0)} req/s  p50 ${area.latency.p50} ms  p99 ${area.latency.p99} ms  errors ${area.errors}  non-2xx ${area.non2xx}`);
    console.log(`  bare page ${floor.rps.toFixed(0)} req/s  p50 ${floor.p50} ms  p99 ${floor.p99} ms`);
    console.log(`  ratio     ${(floor.rps / area.requests.average).toFixed(1)}x the bare page's throughput`);
  } finally {
    await stack.close();
  }
}

await main();
