// The running demo: panel on the simulated driver + platform on embedded defaults, wired together, its sample data made
// once (restarts find it), the banner. Loaded by demo-command.ts once the arguments and addresses are checked.
import { join } from 'node:path';
import pino from 'pino';
import { createPlatformLogger } from '../../module/platform/logger.ts';
import { startDemoBilling, type DemoBilling } from './demo-billing.ts';
import { DEMO_PLANS, seedDemoPlans } from './demo-plans.ts';
import { vpnProductServices } from '../../module/modules/Product/VpnProduct/index.ts';
import { startPlatform, type RunningPlatform } from '../../module/platform/server.ts';
import { randomPassword } from '../../module/platform/services/passwords.ts';
import { createWebDeps } from '../../module/platform/web/web-host.ts';
import { createLogger } from '../../panel/logger.ts';
import { startPanel, type RunningPanel } from '../../panel/server.ts';

const PLATFORM_HASH_COMMENT = 'demo: platform connection';
const PRINTED_COMMENT = 'demo: printed at start';

/** Where the demo keeps its data and listens (checked by demo-command.ts before this module is loaded). */
export interface DemoOptions {
  dataDir: string;
  panelListen: string;
  platformListen: string;
  /** Turns an address error of a listen into the demo's hint (demo-ports.ts). */
  explain(error: unknown): Promise<unknown>;
}

/** Starts panel and platform, seeds what the demo shows (once), prints the banner; resolves to the exit code at the end. */
export async function runDemo(opts: DemoOptions): Promise<number> {
  const { dataDir } = opts;
  // Logs go to stderr at `warn` unless VPNHOST_LOG_LEVEL says otherwise, so the banner stays readable.
  const level = process.env.VPNHOST_LOG_LEVEL ?? 'warn';
  const panel = await startPanel({
    logger: createLogger({ level, destination: pino.destination(2) }),
    listen: opts.panelListen, dataDir: join(dataDir, 'panel'), driver: 'simulated', wireguard: 'auto',
    externalInterface: null, trustProxy: [], licensePublicKeyPem: null,
  }).catch(async (error: unknown) => { throw await opts.explain(error); });
  let platform: RunningPlatform | null = null;
  let billing: DemoBilling | null = null;
  try {
    await panel.bootReconcile;
    const services = panel.app.services;
    if (Object.keys(services.servers.list()).length === 0) await services.servers.create({});
    const hashes = services.accessHashes;
    const adminHash = await renew(hashes, PRINTED_COMMENT, () => hashes.create('127.0.0.1', PRINTED_COMMENT).hash);

    platform = await startPlatform({ listen: opts.platformListen, dataDir: join(dataDir, 'platform'), logger: createPlatformLogger(level) })
      .catch(async (error: unknown) => { throw await opts.explain(error); });
    const platformHash = await renew(hashes, PLATFORM_HASH_COMMENT, () => hashes.create('127.0.0.1', PLATFORM_HASH_COMMENT).hash);
    await vpnProductServices(platform.platform.modules).panelAdmin!.registerPanel({ location: 'local', api_url: panel.url, access_hash: platformHash });
    const product = await seedDemoPlans(platform.platform, 'local');
    const tokens = platform.platform.tokens;
    const token = await renew(tokens, PRINTED_COMMENT, async () => (await tokens.create(PRINTED_COMMENT)).token);
    const logins = await demoLogins(platform, product.uuid);
    billing = await startDemoBilling(platform.platform, platform.url, product.uuid, DEMO_CUSTOMER);
    process.stdout.write(banner(panel.url, adminHash, platform.url, token, product.uuid, dataDir) + billing.banner + webBanner(platform.url, logins));
  } catch (err) {
    await billing?.close();
    await platform?.close();
    await panel.close();
    throw err;
  }
  return waitForSignal(panel, platform, billing);
}

const DEMO_ADMIN = 'admin@demo.vpnhost.test';
const DEMO_CUSTOMER = 'customer@demo.vpnhost.test';

/**
 * The web logins of the demo: an Administrator and a customer owning a provisioned demo service (made on first
 * start); every start sets fresh random passwords, printed in the banner.
 */
async function demoLogins(running: RunningPlatform, productUuid: string): Promise<{ admin: string; customer: string; service: string }> {
  const web = await createWebDeps(running.platform);
  const adminPassword = randomPassword();
  const admin = await web.admins.findByEmail(DEMO_ADMIN);
  if (admin) await web.admins.setPassword(admin.id, adminPassword);
  else await web.admins.create({ email: DEMO_ADMIN, name: 'Demo admin', password: adminPassword, role: 'Administrator' });
  const customerPassword = randomPassword();
  const customer = await web.customers.queries.findByEmail(DEMO_CUSTOMER);
  const customerUuid = customer ? customer.uuid : (await web.customers.create({ email: DEMO_CUSTOMER, name: 'Demo customer', password: customerPassword })).uuid;
  if (customer) await web.customers.setPassword(customer.uuid, customerPassword);
  let service = (await web.customers.queries.serviceUuids(customerUuid))[0];
  if (!service) {
    service = (await running.platform.ops.createService(productUuid, { username: 'demo_customer' })).uuid;
    await web.customers.queries.assignService(service, customerUuid);
    await running.platform.ops.runAction(service, 'create', {});
  }
  return { admin: adminPassword, customer: customerPassword, service };
}

function webBanner(platformUrl: string, logins: { admin: string; customer: string; service: string }): string {
  return `Web (admin pages and client area)
  admin:     ${platformUrl}/admin/login   ${DEMO_ADMIN} / ${logins.admin}
  customer:  ${platformUrl}/client/login  ${DEMO_CUSTOMER} / ${logins.customer}
             (owns the demo service ${logins.service})
  plans:     ${DEMO_PLANS.map((p) => `${p.name} (${p.prices[0][1]} EUR ${p.prices[0][0]}, ${String(p.product_data.data_cap_gb)} GB a month)`).join(', ')}
             on sale at ${platformUrl}/client/order, edited at ${platformUrl}/admin/products

Stop with Ctrl-C.
`;
}

/**
 * Deletes the credentials an earlier demo start made under `comment` and makes a fresh one, so restarts do not
 * pile up hashes and tokens (the banner always prints the current ones).
 */
async function renew<T>(
  store: { list(): Array<{ id: number; comment: string }> | Promise<Array<{ id: number; comment: string }>>; delete(id: number): boolean | Promise<boolean> },
  comment: string,
  create: () => T | Promise<T>,
): Promise<T> {
  for (const old of await store.list()) if (old.comment === comment) await store.delete(old.id);
  return create();
}

function banner(panelUrl: string, hash: string, platformUrl: string, token: string, productUuid: string, dataDir: string): string {
  return `
vpnhost demo is running (data in ${dataDir})

Panel (simulated data plane)   ${panelUrl}/api/v1/
  access hash for 127.0.0.1:   ${hash}
  try: curl -s --cookie access_hash=${hash} ${panelUrl}/api/v1/system/status

Platform (embedded task queue) ${platformUrl}/api/admin/
  admin token:                 ${token}
  sample product (VpnProduct): ${productUuid}
  try: curl -s -H 'authorization: Bearer ${token}' ${platformUrl}/api/admin/panels
       curl -s -H 'authorization: Bearer ${token}' -H 'content-type: application/json' \\
         -d '{"product_uuid":"${productUuid}","service_data":{"username":"demo_user"}}' ${platformUrl}/api/admin/services
  then provision it (the uuid is in the answer above) and read it back:
       curl -s -H 'authorization: Bearer ${token}' -X POST ${platformUrl}/api/admin/services/<uuid>/create
       curl -s -H 'authorization: Bearer ${token}' ${platformUrl}/api/admin/services/<uuid>

`;
}

function waitForSignal(panel: RunningPanel, platform: RunningPlatform | null, billing: DemoBilling | null): Promise<number> {
  return new Promise((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      void (async () => {
        let code = 0;
        for (const part of [billing, platform, panel]) {
          try {
            await part?.close();
          } catch (err) {
            process.stderr.write(`vpnhost demo: shutdown failed: ${(err as Error).message}\n`);
            code = 1;
          }
        }
        done(code);
      })();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
