// Bench (not a test): the back office's two figures of issue 21, each next to its floor measured in the same run.
// (1) The client-area service page (a billed, paid service: billing period, tabs, the module's tab) at 50 concurrent
//     logged-in customers, against a bare Fastify page of the same size (autocannon over loopback). Target ≥ 1/3.
//     Without writes during the rounds the platform answers each customer's page as kept after its first render (the
//     store's change mark does not move); `--write-every MS` makes them stale as often, to show what a miss costs.
// (2) The admin invoices list (50 rows a page) at 100,000 invoices against the admin services list at 100,000
//     services, both through inject() (server time: session, COUNT and page queries, rendering). Target ≤ 2x.
//
// Run: `node --import tsx test/bench/back-office.ts [--rows 100000] [--seconds 5] [--rounds 2] [--client-only] [--connections 50] [--warmup 3] [--cpu-prof FILE] [--write-every MS]`
// (--cpu-prof: a V8 CPU profile of the platform's rounds only; FILE, FILE.1, …; --write-every: one store write every MS
// ms during the platform's rounds, each of which makes the kept pages and sessions stale: 0, the default, writes none). In process: the platform on a temp SQLite
// file with the web tests' TabProduct module, and the bare page; the load client (autocannon) runs in a child process.
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Browser, startWebStack } from '../fixtures/web/web-stack.ts';
import { CUSTOMER_COOKIE } from '../../module/platform/web/web-deps.ts';
import { median } from './bench-math.ts';
import { LoadClient, type LoadRequest, type LoadResult } from './load-client.ts';
import { ServiceQueries } from '../../module/platform/store/query/repositories/services.ts';

const { values: args } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, seconds: { type: 'string', default: '5' }, rounds: { type: 'string', default: '2' }, 'client-only': { type: 'boolean', default: false }, connections: { type: 'string', default: '50' }, warmup: { type: 'string', default: '3' }, 'cpu-prof': { type: 'string' }, 'write-every': { type: 'string', default: '0' } }, strict: true });
const ROWS = Number(args.rows);
const SECONDS = Number(args.seconds);
/** Alternating platform / bare rounds of the client page. */
const ROUNDS = Number(args.rounds);
const CUSTOMERS = 50;
/** autocannon's connections for both pages (50: one per customer; fewer shows the cost of requests in flight). */
const CONNECTIONS = Number(args.connections);
/** Seconds of load on each page before the measured rounds (JIT, and the collection of the fill's garbage). */
const WARMUP = Number(args.warmup);
/** Milliseconds between two store writes during the platform's rounds (0: none). */
const WRITE_EVERY = Number(args['write-every']);

/** CPU time (user + system, µs) this process spent since `start`. */
function cpuMicros(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return used.user + used.system;
}

/** Median server time of `url` over 20 requests after 3 warm-ups. */
async function timePage(admin: Browser, url: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 23; i++) {
    const start = performance.now();
    const res = await admin.get(url);
    const ms = performance.now() - start;
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
    if (i >= 3) times.push(ms);
  }
  return median(times);
}

/** The invoices list against the services list, page by page (both 50 rows a page). */
async function adminLists(admin: Browser, last: number): Promise<void> {
  console.log(`\nadmin lists (50 rows a page), ${ROWS} rows each, median of 20 after 3 warm-ups:`);
  const pairs: Array<[string, string, string]> = [
    ['page 1', '/admin/invoices', '/admin/services'],
    ['middle page', `/admin/invoices?page=${Math.ceil(last / 2)}`, `/admin/services?page=${Math.ceil(last / 2)}`],
    ['last page', `/admin/invoices?page=${last}`, `/admin/services?page=${last}`],
    ['status filter', '/admin/invoices?status=unpaid', '/admin/services?status=pending'],
  ];
  for (const [label, invoices, services] of pairs) {
    const inv = await timePage(admin, invoices);
    const svc = await timePage(admin, services);
    console.log(`  ${label.padEnd(14)} invoices ${inv.toFixed(2)} ms  services ${svc.toFixed(2)} ms  ratio ${(inv / svc).toFixed(2)}x (target ≤ 2x)`);
  }
  const dayFilter = await timePage(admin, '/admin/invoices?from=2025-03-01&to=2025-03-31');
  const customerFilter = await timePage(admin, '/admin/invoices?customer=bulk%40example.com');
  console.log(`  invoices by day range ${dayFilter.toFixed(2)} ms, by customer ${customerFilter.toFixed(2)} ms`);

}

/** The floor: a bare Fastify app (default settings) answering the same path with a fixed HTML page of `bytes` bytes. */
async function bareServer(bytes: number) {
  const bare = Fastify();
  const shell = ['<!doctype html><html><head><title>bare</title></head><body>', '</body></html>'];
  const html = shell.join('x'.repeat(Math.max(0, bytes - shell.join('').length)));
  bare.get('/client/services/:uuid', async (_req, reply) => reply.type('text/html; charset=utf-8').send(html));
  await bare.listen({ host: '127.0.0.1', port: 0 });
  return bare;
}

/** One run of `SECONDS` on `url` by the load client, `requests` cycled on every connection; the server's CPU µs per request. */
async function loadRun(client: LoadClient, url: string, requests: LoadRequest[], seconds: number, write?: () => Promise<unknown>): Promise<LoadResult & { cpuUs: number; writes: number }> {
  let writes = 0;
  const writer = write && WRITE_EVERY > 0 ? setInterval(() => void write().then(() => writes++), WRITE_EVERY) : null;
  const cpu = process.cpuUsage();
  try {
    const result = await client.run({ url, connections: CONNECTIONS, seconds, requests });
    return { ...result, cpuUs: cpuMicros(cpu) / Math.max(1, result.total), writes };
  } finally {
    if (writer) clearInterval(writer);
  }
}

/**
 * The client service page against the bare page: both warmed up (`--warmup` s each), then `ROUNDS` rounds alternating
 * platform and bare (a load change on the shared host weighs on both); `--cpu-prof` profiles the platform's rounds.
 */
async function loadClientPages(client: LoadClient, platformUrl: string, bareUrl: string, requests: LoadRequest[], bytes: number, write: () => Promise<unknown>): Promise<void> {
  await loadRun(client, platformUrl, requests, WARMUP, write);
  await loadRun(client, bareUrl, requests, WARMUP);
  const profiler = args['cpu-prof'] ? new Session() : null;
  if (profiler) {
    profiler.connect();
    await profiler.post('Profiler.enable');
  }
  const rows: Array<{ area: Awaited<ReturnType<typeof loadRun>>; floor: Awaited<ReturnType<typeof loadRun>> }> = [];
  for (let round = 0; round < ROUNDS; round++) {
    if (profiler) await profiler.post('Profiler.start');
    const area = await loadRun(client, platformUrl, requests, SECONDS, write);
    if (profiler) writeFileSync(round === 0 ? args['cpu-prof']! : `${args['cpu-prof']}.${round}`, JSON.stringify((await profiler.post('Profiler.stop')).profile));
    const floor = await loadRun(client, bareUrl, requests, SECONDS);
    rows.push({ area, floor });
  }
  profiler?.disconnect();
  console.log(`\nclient-area service page (${bytes} bytes), ${CUSTOMERS} customers over ${CONNECTIONS} connections, ${ROUNDS} rounds of ${SECONDS} s alternating (autocannon in a child process)`
    + `${WRITE_EVERY > 0 ? `, a store write every ${WRITE_EVERY} ms during the platform's rounds` : ', no store write during the rounds (every page answered as kept after its first)'}:`);
  for (const [i, { area: a, floor: f }] of rows.entries()) {
    console.log(`  round ${i + 1}: platform ${a.rps.toFixed(0)} req/s (p50 ${a.p50} ms, p99 ${a.p99} ms, errors ${a.errors}, non-2xx ${a.non2xx}, server ${a.cpuUs.toFixed(0)} µs CPU/req${WRITE_EVERY > 0 ? `, ${a.writes} writes` : ''})`
      + `  bare ${f.rps.toFixed(0)} req/s (p50 ${f.p50} ms, server ${f.cpuUs.toFixed(0)} µs CPU/req)  1/${(f.rps / a.rps).toFixed(2)}`);
  }
  const sum = (pick: (r: (typeof rows)[number]) => number) => rows.reduce((total, r) => total + pick(r), 0);
  const ratio = sum((r) => r.floor.total) / sum((r) => r.area.total);
  const cpuRatio = sum((r) => r.area.cpuUs) / sum((r) => r.floor.cpuUs);
  const clientCpu = (pick: (r: (typeof rows)[number]) => LoadResult) => (sum((r) => pick(r).clientCpuUs) / sum((r) => pick(r).total)).toFixed(0);
  console.log(`  server CPU time per request (this process), all rounds: 1/${cpuRatio.toFixed(2)} of the bare page's; the load client's: ${clientCpu((r) => r.area)} µs vs ${clientCpu((r) => r.floor)} µs`);
  console.log(`  ratio     1/${ratio.toFixed(2)} of the bare page's throughput, all rounds (target ≥ 1/3)`);
}

async function main(): Promise<void> {
  const stack = await startWebStack();
  try {
    const { platform } = stack;
    const product = await platform.catalogue.createProduct('TabProduct', { server_location: 'ams', plan_type: 'basic', disk_space: 10, bandwidth: 100 }, { name: 'Bench Basic' });
    platform.billing.setPrice(product.uuid, 'monthly', '5.00', 'EUR');

    // 50 customers, each with one ordered and paid service.
    const cookies: string[] = [];
    const urls: string[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const customer = await stack.web.customers.create({ email: `c${i}@example.com`, password: 'Customer-Pass-1' });
      const placed = await platform.billing.order({ customer_uuid: customer.uuid, product_uuid: product.uuid, billing_cycle: 'monthly', service_data: { domain: `c${i}.example.com`, username: `cust_${i}` } });
      await platform.billing.payManually(placed.invoice.uuid, `bench-${i}`);
      cookies.push(`${CUSTOMER_COOKIE}=${await stack.web.sessions.start('customer', customer.uuid)}`);
      urls.push(`/client/services/${placed.service_uuid}`);
    }

    // ROWS services and ROWS invoices (one customer owns them all; the list pages do not join on it).
    const t0 = performance.now();
    const owner = (await stack.web.customers.create({ email: 'bulk@example.com', password: 'Customer-Pass-1' })).uuid;
    const statuses = ['paid', 'paid', 'paid', 'unpaid', 'refunded'];
    await platform.store.transaction(async (tx) => {
      const services = new ServiceQueries(tx, platform.box);
      for (let i = 0; i < ROWS; i++) {
        const service = (await services.create({ product_uuid: product.uuid, module_name: 'TabProduct', service_data: { domain: `s${i}.example.com`, username: `user_${i}`, notes: null } })).uuid;
        const day = new Date(Date.UTC(2025, 0, 1) + (i % 400) * 86_400_000).toISOString();
        await tx.db.insertInto('invoices').values({
          uuid: randomUUID(), number: `INV-B-${String(i).padStart(7, '0')}`, customer_uuid: owner, service_uuid: service, kind: 'renewal',
          description: 'Bench Basic (monthly)', amount_minor: 500, currency: 'EUR', due_date: day.slice(0, 10), status: statuses[i % statuses.length],
          created_at: day, updated_at: day,
        }).execute();
      }
    });
    console.log(`filled ${ROWS} services and ${ROWS} invoices in ${(performance.now() - t0).toFixed(0)} ms`);

    await stack.web.admins.create({ email: 'bench@example.com', password: 'Bench-Pass-1', role: 'Administrator' });
    const admin = new Browser(stack.app);
    await admin.loginAdmin('bench@example.com', 'Bench-Pass-1');
    const last = Math.ceil((ROWS + CUSTOMERS) / 50);
    if (!args['client-only']) await adminLists(admin, last);

    await stack.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (stack.app.server.address() as { port: number }).port;
    // Each customer's browser keeps the CSRF cookie its first page set (as after logging in).
    let body = '';
    for (let i = 0; i < CUSTOMERS; i++) {
      const first = await fetch(`http://127.0.0.1:${port}${urls[i]}`, { headers: { cookie: cookies[i], accept: 'text/html' } });
      body = await first.text();
      if (first.status !== 200 || !body.includes('Bench Basic')) throw new Error(`client service page answered ${first.status}`);
      const csrf = first.headers.getSetCookie().find((c) => c.startsWith('vh_csrf='));
      if (csrf) cookies[i] += `; ${csrf.split(';')[0]}`;
    }
    // The same 50 requests (each customer's path, session and CSRF cookies) for both pages, built once: autocannon
    // cycles through them on every connection. (Built per request through `setupRequest`, as before, the client's own
    // work was charged to the platform's run only: the bare page got one prebuilt request.)
    const requests = urls.map((path, i) => ({ method: 'GET' as const, path, headers: { accept: 'text/html', cookie: cookies[i] } }));
    const bare = await bareServer(body.length);
    const client = await LoadClient.start();
    try {
      // A write the pages do not show (the bulk customer's name, set to what it is): it only moves the store's mark.
      const write = () => platform.store.db.updateTable('customers').set({ name: 'bulk' }).where('uuid', '=', owner).execute();
      await loadClientPages(client, `http://127.0.0.1:${port}`, `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`, requests, body.length, write);
    } finally {
      await client.stop();
      await bare.close();
    }
  } finally {
    await stack.close();
  }
}

await main();
