// ServiceLifecycle on synthetic queue events: which tasks it follows, retries of failed tasks, terminated services,
// explicit setProvisionStatus calls and vanished tasks.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { pino } from 'pino';
import { createHooks } from '../../../hooks.ts';
import type { ModuleLogEntry } from '../../../module/contract/log.ts';
import type { ProvisionStatus } from '../../../module/contract/provision-status.ts';
import { provisioningTask, ServiceLifecycle, type LifecycleService, type StatusWrite } from '../../../module/platform/services/lifecycle.ts';
import { TaskEvents } from '../../../module/task/events.ts';
import { DEFAULT_TASK_OPTIONS, type TaskRecord } from '../../../module/task/queue.ts';

const UUID = 'svc-1';
let rows: Map<string, LifecycleService & { reason?: string }>;
let writes: StatusWrite[];
let logs: ModuleLogEntry[];
let fired: string[];
let events: TaskEvents;
let lifecycle: ServiceLifecycle;

beforeEach(() => {
  rows = new Map();
  writes = [];
  logs = [];
  fired = [];
  const logger = pino({ level: 'silent' });
  const hooks = createHooks(logger);
  hooks.on('service.failed', (e) => void fired.push(`failed:${e.action}:${e.reason}`));
  hooks.on('service.provisioned', () => void fired.push('provisioned'));
  hooks.on('service.created', () => void fired.push('created'));
  lifecycle = new ServiceLifecycle({
    statuses: () => ({
      get: (uuid) => (rows.has(uuid) ? { ...rows.get(uuid)! } : null),
      writeProvisionStatus: (uuid, status, reason) => void rows.set(uuid, { ...rows.get(uuid)!, provision_status: status, reason }),
    }),
    hooks,
    moduleLogs: { write: (entry) => void logs.push(entry) },
    clock: { now: () => new Date('2026-01-01T00:00:00Z') },
    logger,
  });
  lifecycle.onWrite((write) => void writes.push(write));
  events = new TaskEvents();
  lifecycle.attach(events);
});

const service = (status: ProvisionStatus) => rows.set(UUID, { uuid: UUID, product_uuid: 'p-1', provision_status: status });
function record(method: string, action: string, patch: Partial<TaskRecord> = {}): TaskRecord {
  return {
    id: 't-1', job: 'ModuleJob', queue: 'Module', input: { module: { type: 'Product', name: 'VpnProduct', service_uuid: UUID }, method },
    tags: [action, `service:${UUID}`], status: 'pending', options: DEFAULT_TASK_OPTIONS, attempts: 0, exceptions: 0, lastError: null,
    result: null, createdAt: '', updatedAt: '', ...patch,
  };
}
const settle = async () => new Promise((resolve) => setImmediate(resolve));

test('only ModuleJob tasks of a Product with a provisioning method and matching tags are followed', () => {
  assert.ok(provisioningTask(record('createJob', 'create')));
  assert.equal(provisioningTask({ ...record('createJob', 'create'), job: 'Other' }), null);
  assert.equal(provisioningTask(record('createJob', 'suspend')), null, 'the action tag must be the method’s');
  assert.equal(provisioningTask(record('getProductPage', 'create')), null);
  assert.equal(provisioningTask({ ...record('createJob', 'create'), tags: ['create'] }), null, 'no service tag');
  assert.equal(provisioningTask({ ...record('createJob', 'create'), input: { module: { type: 'Plugin', name: 'Fleet' }, method: 'createJob' } }), null);
});

test('create: queued → processing, finished completed → completed, one write each, events created + provisioned', async () => {
  service('pending');
  await events.emit({ type: 'queued', task: record('createJob', 'create'), requeued: false });
  await events.emit({ type: 'finished', task: record('createJob', 'create', { status: 'completed', attempts: 1, result: { status: 'success' } }), outcome: 'completed', error: null });
  await settle();
  assert.deepEqual(writes.map((w) => [w.status, w.cause]), [['processing', 'queued:create'], ['completed', 'completed:createJob']]);
  assert.deepEqual(fired, ['created', 'provisioned']);
  assert.deepEqual(logs.map((l) => [l.level, (l.response as { provision_status: string }).provision_status]), [['info', 'completed']]);
});

test('a failed create queued again by retry goes back to processing; a retry of anything else changes nothing', async () => {
  service('failed');
  await events.emit({ type: 'queued', task: record('createJob', 'create'), requeued: true });
  assert.equal(rows.get(UUID)!.provision_status, 'processing');
  service('completed');
  await events.emit({ type: 'queued', task: record('createJob', 'create'), requeued: true });
  await events.emit({ type: 'queued', task: record('unsuspendJob', 'unsuspend'), requeued: true });
  assert.equal(rows.get(UUID)!.provision_status, 'completed');
  assert.equal(writes.length, 1);
});

test('retrying writes nothing; finished failed writes the failure status with the task error as reason', async () => {
  service('processing');
  await events.emit({ type: 'retrying', task: record('suspendJob', 'suspend', { attempts: 1 }), error: 'panel down' });
  assert.equal(writes.length, 0);
  await events.emit({ type: 'finished', task: record('suspendJob', 'suspend', { status: 'failed', attempts: 2 }), outcome: 'failed', error: 'panel down' });
  await settle();
  assert.deepEqual(rows.get(UUID), { uuid: UUID, product_uuid: 'p-1', provision_status: 'failed', reason: 'panel down' });
  assert.deepEqual(fired, ['failed:suspend:panel down']);
  assert.deepEqual(logs.map((l) => (l.response as { retry?: boolean }).retry ?? false), [true, false]);
});

test('a terminated service: other jobs leave it terminated; create() takes it to processing as the table says (from any)', async () => {
  service('terminated');
  await events.emit({ type: 'finished', task: record('unsuspendJob', 'unsuspend', { status: 'failed' }), outcome: 'failed', error: 'Invalid data provided' });
  await events.emit({ type: 'finished', task: record('unsuspendJob', 'unsuspend', { status: 'completed' }), outcome: 'completed', error: null });
  await events.emit({ type: 'queued', task: record('change_packageJob', 'change_package'), requeued: false });
  assert.equal(rows.get(UUID)!.provision_status, 'terminated');
  assert.deepEqual([...writes], []); // a copy: asserting on `writes` itself would narrow it to never[] below
  await events.emit({ type: 'queued', task: record('createJob', 'create'), requeued: false });
  assert.equal(rows.get(UUID)!.provision_status, 'processing');
  assert.deepEqual(writes.map((w) => w.status), ['processing']);
  service('terminated');
  assert.equal(await lifecycle.set(UUID, 'completed'), true, 'setProvisionStatus is obeyed');
  assert.equal(rows.get(UUID)!.provision_status, 'completed');
});

test('set() is the module’s setProvisionStatus; failVanished fails only a processing service', async () => {
  service('completed');
  assert.equal(await lifecycle.set(UUID, 'pause', 'maintenance'), true);
  assert.deepEqual(writes.at(-1), { uuid: UUID, status: 'pause', reason: 'maintenance', cause: 'set' });
  assert.equal(await lifecycle.failVanished(UUID, 'gone', 'VpnProduct'), false);
  service('processing');
  assert.equal(await lifecycle.failVanished(UUID, 'gone', 'VpnProduct'), true);
  await settle();
  assert.equal(rows.get(UUID)!.provision_status, 'failed');
  assert.deepEqual(fired, ['failed:create:gone']);
  assert.equal(await lifecycle.set('missing', 'completed'), false);
});
