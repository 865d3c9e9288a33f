// Bench helper, run as a child process so the server does not share an event loop with the load:
//   server.ts relay <storeDir|memory> [full|normal]   the real relay
//   server.ts bare                                    node:http that only parses the batches
// Prints `PORT <n>` when listening; exits on SIGTERM.
import { createServer } from 'node:http';
import { join } from 'node:path';
import { startRelay } from '@aep/relay';

const [mode, store, sync] = process.argv.slice(2);
if (mode === 'relay') {
  const relay = await startRelay({
    port: 0, storePath: store === 'memory' || store === undefined ? null : join(store, 'relay.sqlite'),
    storeSync: sync === 'normal' ? 'normal' : 'full', maxSessions: 1000, bufferDepth: 10_000,
  });
  process.stdout.write(`PORT ${relay.port}\n`);
  process.once('SIGTERM', () => { void relay.close().then(() => process.exit(0)); });
} else {
  // Baseline: read the body, split NDJSON lines, JSON.parse each, answer 202. Nothing else.
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let n = 0;
      for (const line of text.split('\n')) if (line !== '') { JSON.parse(line); n++; }
      const body = JSON.stringify({ accepted: n });
      res.writeHead(202, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(`PORT ${typeof a === 'object' && a ? a.port : 0}\n`);
  });
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}
