// The entry of a render thread: the service runs its TypeScript through tsx, whose loader a worker
// thread does not inherit, so each thread registers it before loading ./worker.ts.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
