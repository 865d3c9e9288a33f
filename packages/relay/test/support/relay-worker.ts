// A relay in a worker thread, for tests whose failure mode is a relay that stops answering
// (a loop that never yields): the test's own thread keeps its timers, so it fails on its
// timeout instead of hanging with the relay, and terminate() stops the relay whatever it does.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startRelay, type RelayOptions } from '@aep/relay';

export interface WorkerRelay {
  url: string;
  close(): Promise<void>;
}

/** Starts a relay with `opts` (JSON-serializable) in a worker thread. */
export async function relayInWorker(opts: RelayOptions): Promise<WorkerRelay> {
  const w = new Worker(new URL('./ts-worker.mjs', import.meta.url), { workerData: { entry: import.meta.url, opts } });
  const url = await new Promise<string>((resolve, reject) => {
    w.once('message', (m: { url: string }) => resolve(m.url));
    w.once('error', reject);
  });
  return { url, close: async () => void (await w.terminate()) };
}

if (!isMainThread && parentPort) {
  const relay = await startRelay((workerData as { opts: RelayOptions }).opts);
  parentPort.postMessage({ url: relay.url });
}
