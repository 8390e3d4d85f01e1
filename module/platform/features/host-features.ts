// The platform's host features: billing and recurring billing, the module host, the catalogue, the service and module
// admins, billing's binding to them, the admin operations and the watch on module switches made elsewhere.
import { config as defaultModulesConfig } from '../../../config.ts';
import { DEFAULT_VIEWS_DIR } from '../../contract/view.ts';
import { Task } from '../../task/index.ts';
import { ModuleLoader } from '../loader.ts';
import { PlatformOperations } from '../operations.ts';
import { QueryPlatformReads } from '../platform-reads.ts';
import { createBilling } from '../services/billing/create-billing.ts';
import { Catalogue } from '../services/catalogue.ts';
import { ModuleAdmin } from '../services/module-admin.ts';
import { ModuleInstanceStore, ModuleStateStore } from '../services/module-store.ts';
import { ServiceAdmin } from '../services/service-admin.ts';
import { StoredModuleVersions } from '../store/query/repositories/module-versions.ts';
import { ModuleSwitchWatch } from './module-switch-watch.ts';
import { definePlatformFeature as define } from './registry.ts';

/**
 * Billing's ledger, its order/invoice service and its parts. The ledger goes into every module's context (Payment
 * modules record through it); its service actions and gateway lookups are bound by `billing-binding`.
 */
export const billingFeature = define({
  name: 'billing',
  needs: ['store', 'box', 'clock', 'hooks', 'logger', 'queue'],
  provides: ['billingParts', 'billing'],
  start(get) {
    const queue = get('queue');
    const billingParts = createBilling({ store: get('store'), box: get('box'), clock: get('clock'), hooks: get('hooks'), logger: get('logger').child({ part: 'billing' }), tasks: () => queue });
    return { billingParts, billing: billingParts.service };
  },
});

/** Recurring billing: periods, the billing run and its schedule, dunning, plan changes, saved payment methods. */
export const recurringBillingFeature = define({
  name: 'recurring-billing',
  needs: ['billingParts'],
  provides: ['recurring'],
  start: (get) => ({ recurring: get('billingParts').recurring }),
});

/**
 * The module host: loads the modules switched on (config check, own migrations, services, hooks, activate, version
 * sync) and the gateway/channel instances; closes every module's services on stop.
 */
export const moduleHostFeature = define({
  name: 'module-host',
  needs: ['options', 'store', 'box', 'clock', 'hooks', 'logger', 'services', 'lifecycle', 'moduleLogStore', 'billingParts', 'queue'],
  provides: ['versions', 'moduleStates', 'modules', 'loaded', 'moduleInstances'],
  async start(get, life) {
    const [options, store, clock] = [get('options'), get('store'), get('clock')];
    const versions = new StoredModuleVersions(store, clock);
    await versions.refresh();
    const moduleStates = await ModuleStateStore.open(store, clock);
    const modules = new ModuleLoader({
      shared: {
        services: get('services').forModules(get('lifecycle')), hooks: get('hooks'), clock, versions,
        moduleLogs: get('moduleLogStore'),
        logger: get('logger').child({ part: 'modules' }),
        // modules queue through Task.add, onto the queue the tasks feature installed
        tasks: { add: (job, queueName, input, tags) => Task.add(job, queueName, input, tags) },
        viewsDir: options.viewsDir ?? DEFAULT_VIEWS_DIR,
        billing: get('billingParts').ledger,
      },
      modulesConfig: options.modulesConfig ?? defaultModulesConfig,
      importer: options.importer,
      host: { store, platform: new QueryPlatformReads(store), sealer: get('box'), workerCall: null, states: moduleStates },
    });
    life.onStop(() => modules.close());
    const loaded = await modules.load();
    const moduleInstances = await ModuleInstanceStore.open(store, get('box'), clock);
    return { versions, moduleStates, modules, loaded, moduleInstances };
  },
});

/** Products, validated by their module's `saveProductData`. */
export const catalogueFeature = define({
  name: 'catalogue',
  needs: ['products', 'modules'],
  provides: ['catalogue'],
  start: (get) => ({ catalogue: new Catalogue(get('products'), get('modules')) }),
});

/** Services: create, describe, list, actions; the Product a job runs on; each service's billing view. */
export const serviceAdminFeature = define({
  name: 'service-admin',
  needs: ['services', 'products', 'modules', 'recurring'],
  provides: ['serviceAdmin'],
  start(get) {
    const recurring = get('recurring');
    return { serviceAdmin: new ServiceAdmin({ services: get('services'), products: get('products'), modules: get('modules'), billingOf: (uuid) => recurring.periods.view(uuid) }) };
  },
});

/** The admin side of the module host: lifecycle calls, instances, webhooks, Plugin routes. */
export const moduleAdminFeature = define({
  name: 'module-admin',
  needs: ['modules', 'moduleInstances'],
  provides: ['moduleAdmin'],
  start: (get) => ({ moduleAdmin: new ModuleAdmin(get('modules'), get('moduleInstances')) }),
});

/**
 * Connects billing's service actions (create on payment, refunds, dunning) and gateway lookups to the service host.
 * Its stop ends what runs through them — the billing runs started for remote workers, then the outbox dispatcher —
 * before the module host closes.
 */
export const billingBindingFeature = define({
  name: 'billing-binding',
  needs: ['billingParts', 'serviceAdmin', 'modules', 'moduleInstances'],
  provides: [],
  start(get, life) {
    const billing = get('billingParts');
    billing.bind(get('serviceAdmin'), get('modules'), get('moduleInstances'));
    life.onStop(async () => {
      await billing.recurring.stop();
      await billing.recurring.dispatcher.close();
    });
    return {};
  },
});

/** The admin operations the API and the pages share. */
export const operationsFeature = define({
  name: 'operations',
  needs: ['catalogue', 'serviceAdmin', 'queue'],
  provides: ['ops'],
  start: (get) => ({ ops: new PlatformOperations({ catalogue: get('catalogue'), serviceAdmin: get('serviceAdmin'), queue: get('queue') }) }),
});

/** Follows module switches another process recorded, every `options.moduleWatchMs` (default 1 s; 0: on demand only). */
export const moduleSwitchWatchFeature = define({
  name: 'module-switch-watch',
  needs: ['options', 'modules', 'logger'],
  provides: ['moduleSwitches'],
  async start(get, life) {
    const moduleSwitches = new ModuleSwitchWatch({ modules: get('modules'), logger: get('logger') });
    life.onStop(() => moduleSwitches.stop());
    await moduleSwitches.start(get('options').moduleWatchMs ?? 1000);
    return { moduleSwitches };
  },
});
