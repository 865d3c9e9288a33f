// Test support: relays of one cluster (one stream on one real nats-server), in process.
import { startRelay, type RelayHandle, type RelayOptions } from '@aep/relay';
import { natsBackend, type NatsBackendOptions } from '@aep/relay-nats';
import type { NatsServer } from './nats-server.js';

let streams = 0;
/** A fresh stream name, so clusters in one test file do not share Events. */
export function streamName(prefix = 'T'): string {
  return `${prefix}${process.pid}_${++streams}`;
}

/** Start `n` relays on stream `stream` of `ns`, each on port 0 with `opts`. */
export async function startCluster(
  ns: NatsServer,
  opts: RelayOptions,
  n: number,
  stream = streamName(),
  extra: Partial<NatsBackendOptions> = {},
): Promise<RelayHandle[]> {
  const out: RelayHandle[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await startRelay({ ...opts, storePath: null, backend: natsBackend({ servers: ns.url, stream, heartbeatMs: 500, ...extra }) }));
  }
  return out;
}
