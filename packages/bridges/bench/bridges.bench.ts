// `npm run bench` (bridges): mapping throughput of the AEP-0005 bridges on a realistic mixed
// stream, each as a ratio of plain `JSON.parse` of the same lines measured in the same round
// (ratio = mapping lines/s ÷ JSON.parse lines/s; 1 = as fast as parsing). What a bridge does per
// line: parse, map, serialize. Three rounds, the median printed. Tests never assert timings;
// results go to docs/benchmarks.md.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type * as Bridges from '@aep/bridges';

// Measure what users run: the compiled package when built, else the sources.
const distIndex = fileURLToPath(new URL('../dist/index.js', import.meta.url));
const lib = (existsSync(distIndex) ? await import(distIndex) : await import('@aep/bridges')) as typeof Bridges;
const { encodeCloudEvent, decodeCloudEvent, toOtlpLogRecord, otlpExportRequest, toOcsfRecord } = lib;

const N = Number(process.env['AEP_BENCH_EVENTS'] ?? 20_000);
const ROUNDS = 3;
// Each round: JSON.parse and the mapping, fastest of 5 passes each, back to back; the ratio of the round.

/** A mixed stream like a relay carries: tools, attention lifecycle, runs, progress, heartbeats, vendor events. */
function makeLines(n: number): string[] {
  const out: string[] = [];
  const t0 = Date.parse('2026-08-01T09:00:00Z');
  for (let i = 0; i < n; i++) {
    const session = `s_${i % 40}`;
    const base: Record<string, unknown> = {
      aep: '0.1',
      id: `01K0BENCHBR${String(i).padStart(15, '0')}`,
      time: new Date(t0 + i * 137).toISOString().replace('Z', `${String(i % 1000).padStart(3, '0')}Z`),
      source: `aep://build-${i % 4}/agent/claude-code/session/${session}`,
      agent: 'claude-code',
      session,
      seq: i,
      run: `r_${i % 90}`,
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    };
    let e: Record<string, unknown>;
    switch (i % 8) {
      case 0:
        e = {
          ...base,
          type: 'tool.requested',
          subject: 'Bash',
          data: { tool: { name: 'Bash', call_id: `toolu_${i}` }, args_digest: '0123456789abcdef0123456789abcdef' },
        };
        break;
      case 1:
        e = {
          ...base,
          type: 'tool.completed',
          subject: 'Bash',
          cause: `c${i - 1}`,
          data: {
            tool: { name: 'Bash', call_id: `toolu_${i}` },
            status: 'success',
            duration_ms: 1240,
            'gen_ai.usage.input_tokens': 142,
            'gen_ai.usage.output_tokens': 87,
          },
        };
        break;
      case 2:
        e = {
          ...base,
          type: 'attention.requested',
          subject: 'Bash',
          severity: 'notice',
          capture: 'redacted',
          data: {
            kind: 'permission',
            prompt: 'Run `npm test` in /home/me/repo?',
            options: [
              { id: 'allow', label: 'Allow once' },
              { id: 'deny', label: 'Deny' },
            ],
          },
          approvaldigest: '0123456789abcdef0123456789abcdef',
        };
        break;
      case 3:
        e = {
          ...base,
          type: 'attention.resolved',
          subject: `01K0BENCHBR${String(i - 1).padStart(15, '0')}`,
          data: { resolution: i % 16 === 3 ? 'dismissed' : 'answered', latency_ms: 5000 },
        };
        break;
      case 4:
        e = { ...base, type: 'progress.status', data: { phase: 'build', percent: i % 100 } };
        break;
      case 5:
        e = { ...base, type: 'run.started', capture: 'redacted', data: { trigger: 'user', prompt: 'Refactor the login flow and add tests' } };
        break;
      case 6: {
        const { session: _s, seq: _q, run: _r, ...agent } = base;
        e = { ...agent, source: `aep://build-${i % 4}/agent/claude-code`, type: 'agent.heartbeat', severity: 'debug', data: { tick: i } };
        break;
      }
      default:
        e = { ...base, type: 'x.acme.deploy.started', acmeregion: 'eu1', data: { target: 'staging', replicas: 3 } };
    }
    out.push(JSON.stringify(e));
  }
  return out;
}

const lines = makeLines(N);
const bytes = lines.reduce((n, l) => n + l.length + 1, 0);
const ceLines = lines.map((l) => {
  const r = encodeCloudEvent(JSON.parse(l));
  if (!r.ok) throw new Error('bench corpus');
  return JSON.stringify(r.value);
});
let sink = 0;

/** Milliseconds of the fastest of `passes` passes (the machine is shared: the minimum is the least disturbed). */
function time(fn: () => void, passes = 5): number {
  let min = Infinity;
  for (let i = 0; i < passes; i++) {
    const t = performance.now();
    fn();
    min = Math.min(min, performance.now() - t);
  }
  return min;
}

interface Measure {
  label: string;
  input: string[];
  run: (input: string[]) => void;
}
const parseOnly = (input: string[]) => {
  for (const l of input) sink += (JSON.parse(l) as { seq?: number }).seq ?? 0;
};
const measures: Measure[] = [
  // The floor of any line-to-line bridge: parse and serialize the same value again.
  {
    label: 'reference: parse + stringify (no mapping)',
    input: lines,
    run: (input) => {
      for (const l of input) sink += JSON.stringify(JSON.parse(l)).length;
    },
  },
  {
    label: 'ce encode (parse + encodeCloudEvent + stringify)',
    input: lines,
    run: (input) => {
      for (const l of input) {
        const r = encodeCloudEvent(JSON.parse(l));
        if (r.ok) sink += JSON.stringify(r.value).length;
      }
    },
  },
  {
    label: 'ce decode (parse + decodeCloudEvent + stringify)',
    input: ceLines,
    run: (input) => {
      for (const l of input) {
        const r = decodeCloudEvent(JSON.parse(l));
        if (r.ok && r.value) sink += JSON.stringify(r.value).length;
      }
    },
  },
  {
    label: 'otlp pinned (parse + toOtlpLogRecord + stringify)',
    input: lines,
    run: (input) => {
      for (const l of input) {
        const r = toOtlpLogRecord(JSON.parse(l));
        if (r.ok) sink += JSON.stringify(r.value).length;
      }
    },
  },
  {
    label: 'otlp wire (parse + toOtlpLogRecord + OTLP/HTTP JSON request per 256, stringify)',
    input: lines,
    run: (input) => {
      let batch = [];
      for (const l of input) {
        const r = toOtlpLogRecord(JSON.parse(l));
        if (r.ok) batch.push(r.value);
        if (batch.length === 256) {
          sink += JSON.stringify(otlpExportRequest(batch)).length;
          batch = [];
        }
      }
      if (batch.length) sink += JSON.stringify(otlpExportRequest(batch)).length;
    },
  },
  {
    label: 'ocsf (parse + toOcsfRecord + stringify)',
    input: lines,
    run: (input) => {
      for (const l of input) {
        const r = toOcsfRecord(JSON.parse(l));
        if (r.ok && r.value) sink += JSON.stringify(r.value).length;
      }
    },
  },
];

console.log(
  `corpus: ${lines.length} lines, ${(bytes / 1024 / 1024).toFixed(1)} MiB (8 kinds: tools, attention, runs, progress, heartbeats, vendor; 1/4 above the default max_capture)  ${existsSync(distIndex) ? 'dist' : 'sources'}`,
);
for (const m of measures) {
  m.run(m.input);
  parseOnly(m.input); // warm-up
  const ratios: number[] = [];
  const rates: number[] = [];
  const bases: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const base = time(() => parseOnly(m.input));
    const ms = time(() => m.run(m.input));
    const rate = m.input.length / (ms / 1000);
    const baseRate = m.input.length / (base / 1000);
    rates.push(rate);
    bases.push(baseRate);
    ratios.push(rate / baseRate);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `${m.label}: ${Math.round(med(rates)).toLocaleString('en-US')} lines/s   JSON.parse of the same lines: ${Math.round(med(bases)).toLocaleString('en-US')} lines/s   ratio ${med(ratios).toFixed(2)} (median of ${ROUNDS}; rounds ${ratios.map((r) => r.toFixed(2)).join(' ')})`,
  );
}
if (sink === 42) console.log('');
