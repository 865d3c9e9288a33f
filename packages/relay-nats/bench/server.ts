// Bench helper (child process): `server.ts nats <url> <stream>` = a relay on JetStream;
// `server.ts sqlite <dir>` = the default relay with its SQLite store (synchronous=FULL).
// Prints `PORT <n>` when listening; exits on SIGTERM.
import { join } from 'node:path';
import { startRelay } from '@aep/relay';
import { natsBackend } from '@aep/relay-nats';

const [mode, a, b] = process.argv.slice(2);
const relay = await startRelay(
  mode === 'nats'
    ? { port: 0, storePath: null, bufferDepth: 10_000, maxSessions: 1000, backend: natsBackend({ servers: a!, stream: b! }) }
    : { port: 0, storePath: join(a!, 'relay.sqlite'), bufferDepth: 10_000, maxSessions: 1000 },
);
process.stdout.write(`PORT ${relay.port}\n`);
process.once('SIGTERM', () => {
  void relay.close().then(() => process.exit(0));
});
