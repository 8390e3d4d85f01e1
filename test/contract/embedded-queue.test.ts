// The TaskQueue contract against the embedded SQLite backend.
import { createHarness } from '../fixtures/task/harness.ts';
import { runTaskQueueContract } from './task-queue.contract.ts';

runTaskQueueContract('embedded', async () => createHarness({ url: 'embedded', pollMs: 50, leaseMs: 1000 }));
