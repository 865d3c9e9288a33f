// Faults of a cluster (issue 16 "Must show"): kill -9 of one relay (a subprocess of the compiled
// CLI) during ingest, and NATS restarted mid-ingest. Nothing acknowledged (202) is lost, a
// subscriber resumes at another relay with no gap, ingest answers 503 nats-unavailable while NATS
// is away and recovers by itself. Rebuild (`npm run build`) before running: the CLI runs from dist.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { RelayHandle } from '@aep/relay';
import { WsClient, cmd, ev, http, post, sleep, sse, ulid, type SseClient } from '../../relay/test/support/probes.js';
import { startCluster, streamName } from './cluster.js';
import { NatsServer } from './nats-server.js';

const TOKEN = 'faults-token-0123456789';
const BIN = join(import.meta.dirname, '..', '..', 'cli', 'dist', 'bin.js');
const auth = { authorization: `Bearer ${TOKEN}` };

function events(body: string): Array<Record<string, unknown>> {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

async function until(pred: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** `aep relay --nats` as a subprocess; resolves with its URL once it listens. */
async function relayProcess(ns: NatsServer, stream: string): Promise<{ proc: ChildProcess; url: string; stderr: () => string }> {
  const proc = spawn(process.execPath, [BIN, 'relay', '--nats', ns.url, '--nats-stream', stream, '--port', '0', '--token', TOKEN], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stderr!.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString('utf8');
      const m = /AEP relay listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`aep relay exited ${code}: ${err}`)));
  });
  return { proc, url, stderr: () => err };
}

/** Events of one session, seq 0..n-1. */
function sessionEvents(session: string, n: number): Array<Record<string, unknown>> {
  return Array.from({ length: n }, (_, i) => ev(i === 0 ? 'session.started' : 'progress.status', session, i));
}

/** Seqs a subscriber received, first deliveries only. */
function seqs(s: SseClient[]): number[] {
  const seen = new Set<number>();
  const out: number[] = [];
  for (const c of s)
    for (const e of c.events()) {
      const q = e['seq'] as number;
      if (!seen.has(q)) {
        seen.add(q);
        out.push(q);
      }
    }
  return out;
}

describe('faults of a cluster on JetStream', () => {
  let ns: NatsServer;
  before(async () => {
    ns = await NatsServer.start();
  });
  after(async () => {
    await ns.dispose();
  });

  it('kill -9 of a relay during ingest: nothing acknowledged is lost; its subscriber resumes at another relay with no gap; its claims expire', async () => {
    const stream = streamName('K');
    const victim = await relayProcess(ns, stream);
    const [other] = (await startCluster(ns, { port: 0, token: TOKEN }, 1, stream)) as [RelayHandle];
    try {
      const S = `kill-${ulid()}`;
      const list = sessionEvents(S, 200);
      // An emitter with a claim at the victim, visible in the roster of the other relay.
      const em = await WsClient.open(victim.url, TOKEN);
      em.send({
        type: 'hello',
        versions: ['0.1'],
        role: 'emitter',
        identity: { agent: 'doomed' },
        capabilities: { control: { accepts: ['control.pause'], ack_window_ms: 2000 } },
      });
      await em.waitFor((f) => f['type'] === 'hello');
      const claimed = `claimed-${ulid()}`;
      em.send(ev('session.started', claimed, 0));
      const rosterAt = async (base: string): Promise<Array<Record<string, unknown>>> => {
        const c = await WsClient.open(base, TOKEN);
        await c.hello();
        c.send({ type: 'roster', id: 'r' });
        const f = await c.waitFor((x) => x['type'] === 'roster');
        c.close();
        return f['entries'] as Array<Record<string, unknown>>;
      };
      await until(async () => (await rosterAt(other.url)).some((e) => e['session'] === claimed), 'the claim at the other relay');

      const filter = encodeURIComponent(JSON.stringify({ session: S }));
      const subs: SseClient[] = [sse(victim.url, `filter=${filter}`, { token: TOKEN })];
      assert.equal(await subs[0]!.status, 200);
      await sleep(100);
      const acked = new Set<number>();
      let target = victim.url;
      let killed = false;
      for (let i = 0; i < list.length; i += 5) {
        const batch = list.slice(i, i + 5);
        if (i === 100) {
          victim.proc.kill('SIGKILL');
          killed = true;
        }
        for (;;) {
          let status = 0;
          try {
            status = (await post(target, batch, TOKEN)).status;
          } catch {
            status = 0;
          }
          if (status === 202) {
            for (const e of batch) acked.add(e['seq'] as number);
            break;
          }
          assert.ok(killed, `POST failed (${status}) before the kill`);
          target = other.url; // the client fails over and re-sends the same Events (same ids)
        }
      }
      assert.ok(acked.size === list.length);
      // The subscriber of the dead relay resumes at the other one from its last position.
      await subs[0]!.ended;
      const last = [...subs[0]!.messages].reverse().find((m) => m.id !== undefined);
      const resumed = sse(other.url, `filter=${filter}`, { token: TOKEN, headers: last?.id ? { 'last-event-id': last.id } : {} });
      subs.push(resumed);
      await resumed.waitFor(() => resumed.events().some((e) => e['seq'] === list.length - 1), 10_000);
      const got = seqs(subs);
      assert.deepEqual(
        got,
        Array.from({ length: list.length }, (_, i) => i),
        'no gap, in order',
      );
      if (last?.id) {
        const firstResumed = resumed.events()[0]!['seq'] as number;
        assert.equal(firstResumed, Number(last.id.split(':').pop()) + 1, 'strictly after the resume token');
      }
      resumed.close();
      // Every acknowledged Event is held by the cluster, once.
      const held = events((await http(`${other.url}/stream?live=0&filter=${filter}`, { headers: auth })).body).map((e) => e['seq']);
      assert.deepEqual(
        held,
        [...acked].sort((a, b) => a - b),
      );
      // The dead relay's claims expire: gone from the roster, and a command for them is no-route.
      await until(async () => !(await rosterAt(other.url)).some((e) => e['session'] === claimed), "the dead relay's claim to expire");
      const snd = await WsClient.open(other.url, TOKEN);
      await snd.hello();
      const c = cmd('control.pause', claimed, { data: {} });
      snd.send(c);
      assert.equal((await snd.waitFor((f) => f['cause'] === c['id']))['code'], 'no-route');
      snd.close();
      em.close();
    } finally {
      if (victim.proc.exitCode === null) victim.proc.kill('SIGKILL');
      await other.close();
    }
  });

  it('NATS restarted mid-ingest: 503 nats-unavailable (and /healthz 503) meanwhile, then recovery by itself; nothing acknowledged lost', async () => {
    const stream = streamName('R');
    const relays = await startCluster(ns, { port: 0, token: TOKEN }, 2, stream);
    const [A, B] = relays.map((r) => r.url) as [string, string];
    try {
      const S = `restart-${ulid()}`;
      const list = sessionEvents(S, 120);
      const filter = encodeURIComponent(JSON.stringify({ session: S }));
      const sub = sse(B, `filter=${filter}`, { token: TOKEN });
      assert.equal(await sub.status, 200);
      // A control target at B, connected across the outage.
      const T = `target-${S}`;
      const target = await WsClient.open(B, TOKEN);
      target.send({
        type: 'hello',
        versions: ['0.1'],
        role: 'emitter',
        identity: { agent: 'survivor' },
        capabilities: { control: { accepts: ['control.pause'], ack_window_ms: 2000 } },
      });
      await target.waitFor((f) => f['type'] === 'hello');
      target.send(ev('session.started', T, 0));
      await sleep(100);
      const acked = new Set<number>();
      const refusals: Array<Record<string, unknown>> = [];
      let sawUnhealthy = false;
      let restarted = false;
      for (let i = 0; i < list.length; i += 5) {
        const batch = list.slice(i, i + 5);
        if (i === 60) {
          const em = await WsClient.open(A, TOKEN);
          em.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'ws-emitter' } });
          await em.waitFor((f) => f['type'] === 'hello');
          await ns.stop('SIGKILL');
          // A WebSocket Event has no acknowledgement: the relay closes 1013 (try again later) so
          // the emitter reconnects and re-sends, instead of silently losing it.
          em.send(ev('session.started', `ws-${S}`, 0));
          assert.equal(await em.waitClosed(10_000), 1013);
          assert.equal(em.frames.find((f) => f['type'] === 'closing')?.['reason'], 'unavailable');
          // While NATS is away: refused 503 with the stable code, never a 202 it cannot keep.
          const r = await post(A, batch, TOKEN);
          assert.equal(r.status, 503);
          refusals.push(r.json as Record<string, unknown>);
          const h = await http(`${A}/healthz`, { headers: auth });
          assert.equal(h.status, 503);
          assert.equal((h.json as Record<string, unknown>)['error'], 'nats-unavailable');
          sawUnhealthy = true;
          // Away for a while (the clients keep reconnecting), still refusing.
          await sleep(2000);
          const again = await post(A, batch, TOKEN);
          assert.equal(again.status, 503);
          refusals.push(again.json as Record<string, unknown>);
          await ns.start();
          restarted = true;
        }
        for (;;) {
          const r = await post(A, batch, TOKEN);
          if (r.status === 202) {
            for (const e of batch) acked.add(e['seq'] as number);
            break;
          }
          assert.equal(r.status, 503);
          assert.ok(restarted, 'refused before NATS was stopped');
          refusals.push(r.json as Record<string, unknown>);
          await sleep(100); // the client retries the same Events (same ids)
        }
      }
      assert.ok(sawUnhealthy);
      assert.ok(refusals.length > 0 && refusals.every((j) => j['error'] === 'nats-unavailable'), JSON.stringify(refusals.slice(0, 3)));
      await until(async () => (await http(`${A}/healthz`, { headers: auth })).status === 200, 'healthz back to 200');
      // Routing survived the outage: a command at A reaches the target at B (claims watched again).
      const snd = await WsClient.open(A, TOKEN);
      await snd.hello();
      await until(async () => {
        const c = cmd('control.pause', T, { data: {} });
        snd.send(c);
        await sleep(300);
        return target.frames.some((f) => f['id'] === c['id']);
      }, 'a command at A to reach the target at B after the restart');
      snd.close();
      target.close();
      // Both relays hold every acknowledged Event, exactly once, in order; B's subscriber saw them all.
      for (const base of [A, B]) {
        await until(
          async () => events((await http(`${base}/stream?live=0&filter=${filter}`, { headers: auth })).body).length >= acked.size,
          `${base} caught up`,
        );
        const held = events((await http(`${base}/stream?live=0&filter=${filter}`, { headers: auth })).body).map((e) => e['seq']);
        assert.deepEqual(
          held,
          [...acked].sort((a, b) => a - b),
          base,
        );
      }
      await sub.waitFor(() => seqs([sub]).length === list.length, 15_000).catch(() => {});
      // A subscriber cut by the outage resumes exactly (AEP-0003 §8.4): either it saw all, or it resumes.
      let got = seqs([sub]);
      if (got.length < list.length) {
        const last = [...sub.messages].reverse().find((m) => m.id !== undefined);
        const again = sse(B, `filter=${filter}`, { token: TOKEN, headers: last?.id ? { 'last-event-id': last.id } : {} });
        await again.waitFor(() => again.events().some((e) => e['seq'] === list.length - 1), 10_000);
        got = seqs([sub, again]);
        again.close();
      }
      assert.deepEqual(
        got,
        Array.from({ length: list.length }, (_, i) => i),
      );
      sub.close();
    } finally {
      for (const r of relays) await r.close();
    }
  });
});
