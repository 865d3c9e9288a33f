// `npm run bench -- mcp-bridge`: the proxy's cost per forwarded message, and the elicitation
// mapping, each beside a baseline measured in the same run. Prints results; asserts nothing.
import { PassThrough } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { McpBridge } from '@aep/mcp-bridge';
import { elicitationToForm, formValuesToElicitationContent, validateElicitationContent } from '@aep/protocol';
import { ALL_SHAPES } from '../test/fixtures/schemas.mjs';

const N = 100_000;

// A realistic mix of server -> host traffic: results, progress and log notifications.
const lines: Buffer[] = [];
for (let i = 0; i < N; i++) {
  const m =
    i % 4 === 0
      ? { jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: `result ${i} `.repeat(8) }] } }
      : i % 4 === 1
        ? { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: i, progress: i % 10, total: 10, message: 'working' } }
        : i % 4 === 2
          ? { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { note: 'log line', i } } }
          : { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x'.repeat(64) } } };
  lines.push(Buffer.from(JSON.stringify(m) + '\n'));
}
const bytes = Buffer.concat(lines);
// Feed in 64 KiB chunks, as a pipe delivers them.
const chunks: Buffer[] = [];
for (let i = 0; i < bytes.length; i += 65_536) chunks.push(bytes.subarray(i, i + 65_536));

function sinkStream(): PassThrough {
  const s = new PassThrough();
  s.resume();
  return s;
}

function timeIt(label: string, fn: () => void): number {
  fn(); // warm-up
  const runs = 5;
  let best = Infinity;
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  void label;
  return best;
}

const baseline = timeIt('baseline', () => {
  // The floor of any line-level proxy: split into lines and write each one (no inspection).
  const out = sinkStream();
  let rest: Buffer = Buffer.alloc(0);
  for (const c of chunks) {
    const buf = rest.length ? Buffer.concat([rest, c]) : c;
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
      out.write(buf.subarray(start, nl + 1));
      start = nl + 1;
    }
    rest = buf.subarray(start);
  }
});
const parseAll = timeIt('parse', () => {
  // What a proxy that JSON.parses every line (and re-splits) would cost.
  const out = sinkStream();
  for (const l of lines) {
    JSON.parse(l.toString('utf8'));
    out.write(l);
  }
});
const bridged = timeIt('bridge', () => {
  const bridge = new McpBridge({ toServer: sinkStream(), toHost: sinkStream() });
  for (const c of chunks) bridge.fromServer(c);
  bridge.endServer();
});

const rate = (ms: number) => Math.round(N / (ms / 1000)).toLocaleString('en-US');
console.log(`messages: ${N} (${(bytes.length / 1e6).toFixed(1)} MB), best of 5`);
console.log(`bridge pass-through (server -> host): ${rate(bridged)} msg/s`);
console.log(`baseline split + write every line:    ${rate(baseline)} msg/s   bridge/baseline time ${(bridged / baseline).toFixed(2)}`);
console.log(`baseline JSON.parse + write per line: ${rate(parseAll)} msg/s   bridge/baseline time ${(bridged / parseAll).toFixed(2)}`);

// Mapping: one 7-field elicitation -> form data, and an answer back to typed content + checks.
const params = ALL_SHAPES;
const values = { bucket: 'nightly', retention: 30, ratio: 1.5, encrypt: false, tier: 'arc', days: ['mon', 'fri'] };
const M = 20_000;
const mapMs = timeIt('map', () => {
  for (let i = 0; i < M; i++) elicitationToForm(params, { agent: 'a', capture: 'full' });
});
const mapRedMs = timeIt('map-redacted', () => {
  for (let i = 0; i < M; i++) elicitationToForm(params, { agent: 'a', capture: 'redacted' });
});
const backMs = timeIt('back', () => {
  for (let i = 0; i < M; i++) validateElicitationContent(params.requestedSchema, formValuesToElicitationContent(params.requestedSchema, values));
});
const jsonMs = timeIt('json', () => {
  for (let i = 0; i < M; i++) JSON.parse(JSON.stringify(params));
});
const per = (ms: number) => Math.round(M / (ms / 1000)).toLocaleString('en-US');
console.log(`elicitationToForm (full):              ${per(mapMs)} /s`);
console.log(`elicitationToForm (redacted, pipeline): ${per(mapRedMs)} /s`);
console.log(`values -> content + MCP validation:    ${per(backMs)} /s`);
console.log(
  `baseline JSON round trip of params:    ${per(jsonMs)} /s   time ratios vs baseline ${(mapMs / jsonMs).toFixed(2)} / ${(mapRedMs / jsonMs).toFixed(2)} / ${(backMs / jsonMs).toFixed(2)}`,
);
