// Boots a worker thread on a TypeScript module (workerData.entry, a file URL): worker threads do
// not inherit the test process's `--import tsx` loader, so this registers it first.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
