// Bootstrap of the sample engine's worker thread. In a compiled tree (the test runner's `.build`) the worker's entry
// is JavaScript beside this file; otherwise a worker does not inherit the parent's tsx loader, so it registers its own
// before loading the TypeScript entry.
import { existsSync } from 'node:fs';

const compiled = new URL('./sample-worker.js', import.meta.url);
if (!existsSync(compiled)) (await import('tsx/esm/api')).register();
await import(existsSync(compiled) ? compiled.href : './sample-worker.ts');
