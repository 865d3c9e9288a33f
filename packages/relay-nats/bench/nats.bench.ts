// `npm run bench -- nats` (issue 16): ingest and fan-out p99 of relays on one NATS JetStream,
// with 1 and with 3 relays, beside the default SQLite relay measured in the same run.
//  - ingest: NDJSON batches of 100 across 64 sessions, 4 concurrent keep-alive clients spread
//    round-robin over the relays; Events/s and POST latency p50/p99 (a POST is answered after
//    the SQLite commit, or after every JetStream publish ack + the local apply).
//  - fan-out: 10 SSE subscribers spread over the relays, a producer POSTing batches of 5 every
//    5 ms (1000 Events/s) to the first relay; latency = POST sent -> subscriber received (across
//    relays it includes the JetStream round trip and the other relay's consumer).
// Servers (relays and nats-server) are child processes; load and subscribers run here. The
// machine is shared: read the figures side by side, not as absolutes. Tests never assert timings.
import { Agent, request } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NatsServer } from '../test/nats-server.js';
import { startChild, type Child } from '../../../test/support/child.js';

const serverTs = fileURLToPath(new URL('./server.ts', import.meta.url));
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The NATS-backed (or default) relay server, as a child process (bench/server.ts, prints PORT). */
const server = (args: string[]): Promise<Child> => startChild(['--conditions=source', '--import', 'tsx', serverTs, ...args]);

let idc = 0;
function event(session: string, seq: number, bt?: number): string {
  const id = `01JNATS${String(idc++).padStart(19, '0')}`;
  return `{"aep":"0.1","id":"${id}","type":"tool.completed","time":"2026-07-03T10:15:09.000Z","source":"aep://bench/agent/bench/session/${session}","agent":"bench","session":"${session}","seq":${seq},"epoch":0${bt !== undefined ? `,"bt":${Math.round(bt * 1000)}` : ''},"data":{"tool":{"name":"Bash"},"status":"success","duration_ms":12}}`;
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });
function post(port: number, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/events',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** CPU seconds (user + system, all threads) used so far by a process. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

function batches(tag: string, n: number, size: number): Buffer[] {
  const seqs = new Map<string, number>();
  const out: Buffer[] = [];
  for (let b = 0; b < n; b++) {
    const lines: string[] = [];
    for (let i = 0; i < size; i++) {
      const s = `${tag}-${(b * size + i) % 64}`;
      const q = seqs.get(s) ?? 0;
      seqs.set(s, q + 1);
      lines.push(event(s, q));
    }
    out.push(Buffer.from(lines.join('\n') + '\n'));
  }
  return out;
}

async function ingest(ports: number[], list: Buffer[], conc: number): Promise<{ rate: number; lat: number[] }> {
  let next = 0;
  const lat: number[] = [];
  const t0 = now();
  await Promise.all(
    Array.from({ length: conc }, async (_, w) => {
      while (next < list.length) {
        const i = next++;
        const t = now();
        const s = await post(ports[(i + w) % ports.length]!, list[i]!);
        if (s !== 202) throw new Error(`POST answered ${s}`);
        lat.push(now() - t);
      }
    }),
  );
  const ms = now() - t0;
  return { rate: (list.length * 100) / (ms / 1000), lat: lat.sort((a, b) => a - b) };
}

interface Sub {
  lat: number[];
  ready: Promise<void>;
  close(): void;
}
function sseSub(port: number, session: string): Sub {
  const s: Sub = { lat: [], ready: Promise.resolve(), close: () => {} };
  s.ready = new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port, path: `/stream?filter=${encodeURIComponent(JSON.stringify({ session }))}`, headers: { accept: 'text/event-stream' } },
      (res) => {
        resolve();
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          const t = now();
          buf += c;
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const k = block.indexOf('"bt":');
            if (k >= 0) s.lat.push(t - Number(block.slice(k + 5, block.indexOf(',', k))) / 1000);
          }
        });
      },
    );
    req.on('error', () => {});
    req.end();
    s.close = () => req.destroy();
  });
  return s;
}

async function fanout(ports: number[], tag: string): Promise<{ p50: number; p99: number; got: number; expected: number }> {
  const session = `fan-${tag}`;
  const subs = Array.from({ length: 10 }, (_, i) => sseSub(ports[i % ports.length]!, session));
  await Promise.all(subs.map((s) => s.ready));
  await sleep(300);
  let seq = 0;
  let posted = 0;
  const t0 = now();
  const inflight: Array<Promise<number>> = [];
  while (now() - t0 < 3000) {
    const t = now();
    const lines: string[] = [];
    for (let i = 0; i < 5; i++) lines.push(event(session, seq++, t));
    inflight.push(post(ports[0]!, Buffer.from(lines.join('\n') + '\n')));
    posted += 5;
    await sleep(5);
  }
  await Promise.all(inflight);
  await sleep(1000);
  for (const s of subs) s.close();
  const lat = subs.flatMap((s) => s.lat).sort((a, b) => a - b);
  return { p50: pct(lat, 0.5), p99: pct(lat, 0.99), got: lat.length, expected: posted * subs.length };
}

const ns = await NatsServer.start();
const dir = mkdtempSync(join(tmpdir(), 'aep-nats-bench-'));
try {
  const configs: Array<{ name: string; start: () => Promise<Child[]> }> = [
    { name: 'SQLite relay (default, synchronous=FULL)', start: async () => [await server(['sqlite', mkdtempSync(join(dir, 's-'))])] },
    { name: '1 relay on NATS JetStream (file storage)', start: async () => [await server(['nats', ns.url, `B1_${process.pid}`])] },
    {
      name: '3 relays on one NATS JetStream',
      start: async () => {
        const s = `B3_${process.pid}`;
        const out: Child[] = [];
        for (let i = 0; i < 3; i++) out.push(await server(['nats', ns.url, s]));
        return out;
      },
    },
  ];
  console.log(
    `nats-server ${ns.url} (Debian 2.9, JetStream file store); ingest: 300 batches of 100 Events, 64 sessions, 4 clients; fan-out: 10 SSE subscribers, 1000 Events/s for 3 s`,
  );
  // Two interleaved rounds (the machine is shared; contention only ever slows a run down).
  for (let round = 1; round <= 2; round++) {
    for (const c of configs) {
      const servers = await c.start();
      const ports = servers.map((s) => s.port);
      await ingest(ports, batches(`warm-${round}-${c.name.length}`, 50, 100), 4);
      const relayCpu0 = servers.reduce((n, s) => n + cpuSeconds(s.child.pid), 0);
      const natsCpu0 = cpuSeconds(ns.pid);
      const ing = await ingest(ports, batches(`ing-${round}-${c.name.length}`, 300, 100), 4);
      const relayUs = ((servers.reduce((n, s) => n + cpuSeconds(s.child.pid), 0) - relayCpu0) * 1e6) / 30_000;
      const natsUs = ((cpuSeconds(ns.pid) - natsCpu0) * 1e6) / 30_000;
      const fan = await fanout(ports, `${round}-${c.name.length}`);
      console.log(
        `  [${round}] ${c.name.padEnd(42)} ingest ${ing.rate.toFixed(0).padStart(6)} Events/s  POST p50 ${pct(ing.lat, 0.5).toFixed(1)} ms p99 ${pct(ing.lat, 0.99).toFixed(1)} ms  CPU/Event relays ${relayUs.toFixed(0)} µs nats-server ${c.name.startsWith('SQLite') ? '-' : natsUs.toFixed(0)} µs | fan-out p50 ${fan.p50.toFixed(1)} ms p99 ${fan.p99.toFixed(1)} ms (${fan.got}/${fan.expected} delivered)`,
      );
      for (const s of servers) await s.stop();
    }
  }
} finally {
  await ns.dispose();
  rmSync(dir, { recursive: true, force: true });
}
