// Bootstrap of the sample engine's worker thread: a worker does not inherit the parent's tsx loader, so it registers
// its own before loading the TypeScript entry.
import { register } from 'tsx/esm/api';

register();
await import('./sample-worker.ts');
