// Every live checker probe (packages/relay/test/support/live-checks.ts) against relays on NATS
// JetStream (issue 16): two relays of one cluster, the resume probes and the WebSocket half of
// the eviction probe reading at the second one.
import { after } from 'node:test';
import { liveCheckSuite } from '../../relay/test/support/live-checks.js';
import { startCluster } from './cluster.js';
import { NatsServer } from './nats-server.js';

let ns: NatsServer | null = null;
after(async () => {
  await ns?.dispose();
});

liveCheckSuite(' [NATS JetStream, 2 relays]', async (opts, n) => {
  ns ??= await NatsServer.start();
  return startCluster(ns, opts, n);
});
