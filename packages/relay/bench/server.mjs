// Bench helper (issue 19), run as a child process so the server does not share an event loop
// with the load. Plain JS importing the compiled relay (`npm run build` first), so RSS figures
// are those of what users run (no TypeScript loader in the process).
//   server.mjs relay <storeFile|memory>   the real relay (defaults: 256 MiB retention, FULL sync)
//   server.mjs bare                       node:http that only parses the NDJSON lines, answers 202
//   server.mjs floor <file|memory>        the ingest floor (floor.mjs): parse, dedupe on
//                                         (source, id), keep the bytes; with a file, write them
//                                         to it (O_DSYNC) before the 202
//   server.mjs echo                       raw fan-out floor: POST lines written as they are to
//                                         every GET /stream (SSE) and /socket (WebSocket) client
// Prints `PORT <n>` when listening; exits on SIGTERM.
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';

const [mode, store] = process.argv.slice(2);
if (mode === 'relay') {
  const { startRelay, tuneGc } = await import('../dist/index.js');
  // As `aep relay` does (issue 19; AEP_RELAY_SCAVENGE=parallel measures V8's default). An older
  // build's server (AEP_BENCH_SERVER) has no tuneGc.
  tuneGc?.();
  const relay = await startRelay({ port: 0, storePath: store === 'memory' ? null : store, log: () => {} });
  process.stdout.write(`PORT ${relay.port}\n`);
  process.once('SIGTERM', () => {
    void relay.close().then(() => process.exit(0));
  });
} else if (mode === 'floor') {
  const { startFloor } = await import('./floor.mjs');
  const server = await startFloor(store === 'memory' ? null : store);
  process.stdout.write(`PORT ${server.address().port}\n`);
  process.once('SIGTERM', () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
} else {
  const sse = new Set();
  const wss = mode === 'echo' ? new WebSocketServer({ noServer: true }) : null;
  const server = createServer((req, res) => {
    if (req.method === 'GET' && mode === 'echo') {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.flushHeaders();
      sse.add(res);
      res.on('close', () => sse.delete(res));
      return;
    }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let n = 0;
      for (const line of text.split('\n')) {
        if (line === '') continue;
        JSON.parse(line);
        n++;
        if (wss) {
          for (const c of wss.clients) c.send(line);
          for (const r of sse) r.write(`event: x\ndata: ${line}\n\n`);
        }
      }
      const body = JSON.stringify({ accepted: n });
      res.writeHead(202, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  if (wss) server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws)));
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(`PORT ${typeof a === 'object' && a ? a.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    for (const r of sse) r.destroy();
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}
