// Bench helper (issue 19): the fan-out subscribers, in a worker thread of their own, so their
// parsing is not queued behind the load generator's event loop (relay-bench does the same with
// its `--sub-threads`). Plain JS (no TypeScript loader in the worker).
// workerData: { port, binding: 'sse' | 'ws', raw, filter, count }
// Messages in: { stop: bt } (answer with the results for the Events stamped `bt` or later: the
// measured ones, whatever was in flight when measuring began).
// Messages out: { ready: true } once every subscriber is ready; then { lat: Float64Array, received }.
import { parentPort, workerData } from 'node:worker_threads';
import { request } from 'node:http';
import WebSocket from 'ws';

const { port, binding, raw, filter, count } = workerData;
/** The same clock as the publisher's `bt` stamps: process-wide, monotonic, shared by every thread. */
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

/** Per delivery: its stamp (µs) and its latency (ms), pairs back to back. */
let rec = new Float64Array(1 << 21);
let n = 0;
function record(text) {
  const k = text.indexOf('"bt":');
  if (k < 0) return;
  const bt = Number(text.slice(k + 5, text.indexOf(',', k)));
  const v = nowMs() - bt / 1000;
  if (Number.isNaN(v)) return;
  if (n === rec.length) {
    const grown = new Float64Array(rec.length * 2);
    grown.set(rec);
    rec = grown;
  }
  rec[n++] = bt;
  rec[n++] = v;
}

const closers = [];
function sseSub() {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: `/stream?filter=${encodeURIComponent(filter)}`, agent: false }, (res) => {
      resolve();
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (c) => {
        buf = buf === '' ? c : buf + c;
        let from = 0;
        let i;
        while ((i = buf.indexOf('\n\n', from)) >= 0) {
          record(buf.slice(from, i));
          from = i + 2;
        }
        buf = from === 0 ? buf : buf.slice(from);
      });
      res.on('error', () => {});
    });
    req.on('error', () => resolve());
    req.end();
    closers.push(() => req.destroy());
  });
}
function wsSub() {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/socket`);
  closers.push(() => ws.terminate());
  return new Promise((resolve) => {
    ws.on('open', () => {
      if (raw) {
        resolve();
        return;
      }
      ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
      ws.send(JSON.stringify({ type: 'subscribe', id: 's', filter: JSON.parse(filter) }));
    });
    ws.on('message', (d) => {
      const text = d.toString('utf8');
      if (text.startsWith('{"type":"subscribed"')) {
        resolve();
        return;
      }
      record(text);
    });
    ws.on('error', () => resolve());
  });
}

await Promise.all(Array.from({ length: count }, () => (binding === 'sse' ? sseSub() : wsSub())));
parentPort.on('message', (m) => {
  if (m?.stop === undefined) return;
  for (const c of closers) c();
  const lat = new Float64Array(n / 2);
  let received = 0;
  for (let i = 0; i < n; i += 2) if (rec[i] >= m.stop) lat[received++] = rec[i + 1];
  const out = lat.slice(0, received);
  parentPort.postMessage({ lat: out, received }, [out.buffer]);
  parentPort.close();
});
parentPort.postMessage({ ready: true });
