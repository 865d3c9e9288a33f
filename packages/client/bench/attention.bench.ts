// Attention round trip through a real relay subprocess: request emitted by the engine →
// consumer sees it (WS subscription) → CommandSender.respond → the engine holds the validated
// answer. 1 000 sequential round trips, p50/p99, beside two baselines measured in the same run:
// a raw WebSocket echo round trip on this machine, and a raw event hop through the same relay
// (WS emit → WS consumer). Prints results only; asserts nothing.
import { WebSocketServer, WebSocket } from 'ws';
import { AttentionEngine, CommandSender, EmitterConnection, subscribe } from '@aep/client/node';
import type { FieldSpec, WireEvent } from '@aep/client';
import { startRelayProcess } from '../../../test/support/cli.js';
import { BACKUP_FORM_FIELDS } from '../../../test/support/forms.js';

const N = Number(process.env['AEP_BENCH_N'] ?? 1000);
const WARMUP = 50;
const TOKEN = 'bench-token';

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
}
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function rawEcho(): Promise<number[]> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.once('listening', r));
  wss.on('connection', (s) => s.on('message', (m: Buffer) => s.send(m.toString('utf8'))));
  const port = (wss.address() as { port: number }).port;
  const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
  await new Promise((r) => ws.once('open', r));
  let next: (() => void) | undefined;
  ws.on('message', () => next?.());
  const times: number[] = [];
  const payload = JSON.stringify({ aep: '0.1', id: 'x', type: 'attention.requested', data: { kind: 'form', prompt: 'p'.repeat(200) } });
  for (let i = 0; i < N + WARMUP; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      next = r;
      ws.send(payload);
    });
    if (i >= WARMUP) times.push(performance.now() - t0);
  }
  ws.close();
  await new Promise<void>((r) => wss.close(() => r()));
  return times;
}

async function relayHop(url: string): Promise<number[]> {
  const conn = await EmitterConnection.connect({ url, token: TOKEN, agent: 'bench-hop' });
  let next: (() => void) | undefined;
  const sub = subscribe({ url, token: TOKEN, transport: 'ws', filter: { agent: 'bench-hop' } }, () => next?.());
  await sub.ready;
  const times: number[] = [];
  for (let i = 0; i < N + WARMUP; i++) {
    const t0 = performance.now();
    await new Promise<void>((r) => {
      next = r;
      conn.emit('hop', 'progress.status', { percent: i % 100 });
    });
    if (i >= WARMUP) times.push(performance.now() - t0);
  }
  sub.close();
  await conn.close();
  return times;
}

const FIELDS: FieldSpec[] = [...BACKUP_FORM_FIELDS];

async function attention(url: string): Promise<{ total: number[]; seen: number[] }> {
  const conn = await EmitterConnection.connect({
    url,
    token: TOKEN,
    agent: 'bench-agent',
    capture: 'redacted',
    control: { accepts: ['control.attention.respond'] },
  });
  const engine = new AttentionEngine(conn);
  const sender = await CommandSender.connect({ url, token: TOKEN, ackWindowMs: 10_000 });
  const waiting = new Map<string, () => void>();
  const sub = subscribe({ url, token: TOKEN, transport: 'ws', filter: { type: 'attention.requested', agent: 'bench-agent' } }, (e: WireEvent) => {
    waiting.get(e.id)?.();
  });
  await sub.ready;
  const total: number[] = [];
  const seen: number[] = [];
  const values = { '1': 'nightly-bk', '2': 30, '3': true, '4': ['1', '3'], '5': 'cold-line' };
  for (let i = 0; i < N + WARMUP; i++) {
    const t0 = performance.now();
    let sawIt!: () => void;
    const saw = new Promise<void>((r) => {
      sawIt = r;
    });
    const p = engine.requestAttention({ session: 'bench', kind: 'form', prompt: 'Configure the nightly backup', fields: FIELDS });
    waiting.set(p.id, sawIt);
    await saw;
    const t1 = performance.now();
    waiting.delete(p.id);
    const ack = sender.respond({ session: 'bench', requestId: p.id, answer: { values } });
    const outcome = await p;
    const t2 = performance.now();
    if (outcome.status !== 'answered') throw new Error(`round trip ${i}: ${outcome.status}`);
    const r = await ack;
    if (r.status !== 'accepted') throw new Error(`round trip ${i}: ${r.status}`);
    if (i >= WARMUP) {
      total.push(t2 - t0);
      seen.push(t1 - t0);
    }
  }
  sub.close();
  await sender.close();
  await engine.shutdown();
  await conn.close();
  return { total, seen };
}

const relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
try {
  const echo = await rawEcho();
  const hop = await relayHop(relay.url);
  const att = await attention(relay.url);
  const line = (name: string, xs: number[]) => console.log(`${name.padEnd(58)} p50 ${fmt(pct(xs, 50)).padStart(9)}  p99 ${fmt(pct(xs, 99)).padStart(9)}`);
  console.log(`attention round trips: ${N} sequential (after ${WARMUP} warm-up), relay subprocess on 127.0.0.1`);
  line('baseline: raw WebSocket echo round trip (same machine)', echo);
  line('baseline: raw event hop through the relay (WS emit → WS sub)', hop);
  line('request emitted → consumer sees it', att.seen);
  line('full loop: request → seen → respond → engine holds answer', att.total);
  console.log(
    `ratio full loop / raw WS echo: p50 ${(pct(att.total, 50) / pct(echo, 50)).toFixed(1)}x, p99 ${(pct(att.total, 99) / pct(echo, 99)).toFixed(1)}x`,
  );
  console.log(`ratio full loop / relay hop:   p50 ${(pct(att.total, 50) / pct(hop, 50)).toFixed(1)}x, p99 ${(pct(att.total, 99) / pct(hop, 99)).toFixed(1)}x`);
} finally {
  await relay.stop();
}
