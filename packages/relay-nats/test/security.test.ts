// Security of the scale-out mode (docs/security.md "Scale-out (16)"): NATS credentials never
// logged, claims only hashed in KV and in the stream, capture enforced before anything reaches
// NATS, session ids cannot inject subjects or wildcards.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '@aep/relay';
import { natsBackend, sessionToken } from '@aep/relay-nats';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { WsClient, ev, http, post, sleep, sse } from '../../relay/test/support/probes.js';
import { startCluster, streamName } from './cluster.js';
import { NatsServer, freePort } from './nats-server.js';

const BIN = join(import.meta.dirname, '..', '..', 'cli', 'dist', 'bin.js');
const SEED = 'SUAPLANTEDSEEDNEVERLOGGED7XKQ2RZ4M5T6W7Y3ABCDEFGHJKLMNPQRS';
const JWT = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.PLANTEDJWTNEVERLOGGED.sig';
const PASSWORD = 'planted-nats-password-4711';
const CREDS = `-----BEGIN NATS USER JWT-----\n${JWT}\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${SEED}\n------END USER NKEY SEED------\n`;

function leaks(text: string): string[] {
  return [SEED, JWT, PASSWORD, 'PLANTED'].filter((s) => text.includes(s));
}

describe('scale-out security', () => {
  let ns: NatsServer;
  let dir: string;
  before(async () => {
    ns = await NatsServer.start();
    dir = mkdtempSync(join(tmpdir(), 'aep-nats-sec-'));
  });
  after(async () => {
    await ns.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('NATS credentials (a creds file, a password in the URL) never appear in the CLI output when the relay cannot start', async () => {
    const creds = join(dir, 'user.creds');
    writeFileSync(creds, CREDS, { mode: 0o600 });
    const port = await freePort(); // nothing listens there
    const r = spawnSync(process.execPath, [BIN, 'relay', '--nats', `nats://alice:${PASSWORD}@127.0.0.1:${port}`, '--nats-creds', creds, '--port', '0'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.status, 5, r.stderr);
    assert.match(r.stderr, /AEP_CLI_RELAY_START_FAILED/);
    assert.match(r.stderr, /AEP_RELAY_NATS_UNAVAILABLE/);
    assert.match(r.stderr, /\*\*\*@127\.0\.0\.1/, 'the URL is named with its credentials masked');
    assert.deepEqual(leaks(r.stdout + r.stderr), []);
    const missing = spawnSync(process.execPath, [BIN, 'relay', '--nats', ns.url, '--nats-creds', join(dir, 'absent.creds'), '--port', '0'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(missing.status, 5);
    assert.match(missing.stderr, /AEP_RELAY_NATS_CONFIG/);
    assert.match(missing.stderr, /absent\.creds: ENOENT/);
  });

  it('a running relay with a password in its NATS URL never logs it, through a NATS outage and back', async () => {
    const lines: string[] = [];
    const url = ns.url.replace('nats://', `nats://alice:${PASSWORD}@`);
    const relay = await startRelay({ port: 0, storePath: null, log: (l) => lines.push(l), backend: natsBackend({ servers: url, stream: streamName('P') }) });
    try {
      assert.equal((await post(relay.url, [ev('session.started', 'pw-s', 0)])).status, 202);
      await ns.stop('SIGKILL');
      const r = await post(relay.url, [ev('progress.status', 'pw-s', 1)]);
      assert.equal(r.status, 503);
      const h = await http(`${relay.url}/healthz`);
      assert.deepEqual(leaks(JSON.stringify(r.json) + h.body), []);
      await ns.start();
      for (let i = 0; i < 200 && (await post(relay.url, [ev('progress.status', 'pw-s', 1)])).status !== 202; i++) await sleep(100);
      assert.ok(
        lines.some((l) => /nats: disconnected/.test(l)),
        lines.join('\n'),
      );
      assert.deepEqual(leaks(lines.join('\n')), []);
    } finally {
      await relay.close();
    }
  });

  it('the hello claim never reaches NATS: KV and stream headers hold only its sha256 digest', async () => {
    const stream = streamName('C');
    const [relay] = (await startCluster(ns, { port: 0, token: 'sec-token-0123456789' }, 1, stream)) as [RelayHandle];
    const claim = 'PlantedClaimNeverStored_0123456789abcdef';
    const digest = createHash('sha256').update(claim).digest('hex');
    const nc = await connect({ servers: ns.url });
    try {
      const em = await WsClient.open(relay.url, 'sec-token-0123456789');
      em.send({
        type: 'hello',
        versions: ['0.1'],
        role: 'emitter',
        identity: { agent: 'sec' },
        claim,
        capabilities: { control: { accepts: ['control.attention.respond'], ack_window_ms: 1000 } },
      });
      await em.waitFor((f) => f['type'] === 'hello');
      em.send(ev('session.started', 'claim-s', 0));
      em.send(ev('attention.requested', 'claim-s', 1, { data: { kind: 'question', prompt: 'q?' } }));
      await sleep(300);
      // Everything in the claims bucket and every stored message with its headers.
      const kv = await new Kvm(nc).open(`${stream}_claims`);
      let kvText = '';
      for await (const k of await kv.keys()) kvText += `${k}=${(await kv.get(k))?.string() ?? ''}\n`;
      const jsm = await jetstreamManager(nc);
      const info = await jsm.streams.info(stream);
      let streamText = '';
      for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
        const m = await jsm.streams.getMessage(stream, { seq });
        if (!m) continue;
        streamText += `${m.subject} ${m.header ? [...m.header.keys()].map((k) => `${k}:${m.header.get(k)}`).join(' ') : ''} ${m.string()}\n`;
      }
      assert.ok(kvText.includes(digest), 'the claims bucket holds the digest');
      assert.ok(streamText.includes(`Aep-Claim:${digest}`), 'the request is bound to the digest');
      assert.ok(!kvText.includes(claim) && !streamText.includes(claim), 'the claim itself is nowhere');
      em.close();
    } finally {
      await nc.close();
      await relay.close();
    }
  });

  it('capture is enforced before NATS: content above the declared capture is never published', async () => {
    const stream = streamName('G');
    const [a, b] = (await startCluster(ns, { port: 0 }, 2, stream)) as [RelayHandle, RelayHandle];
    const nc = await connect({ servers: ns.url });
    try {
      const s = 'gate-s';
      const watch = sse(b.url, `filter=${encodeURIComponent(JSON.stringify({ session: s }))}`);
      assert.equal(await watch.status, 200);
      await sleep(100);
      // Declares metadata but carries a redacted-level prompt: a dishonest sender.
      const e = ev('run.started', s, 0, { capture: 'metadata', run: 'r', data: { trigger: 'user', prompt: 'PLANTED-CANARY free text' } });
      assert.equal((await post(a.url, [e])).status, 202);
      await watch.waitFor(() => watch.events().length === 1);
      assert.ok(!watch.raw().includes('PLANTED-CANARY'));
      const jsm = await jetstreamManager(nc);
      const m = await jsm.streams.getMessage(stream, { last_by_subj: `aep.${stream}.ev.s.${sessionToken(s)}` });
      assert.ok(m);
      assert.ok(!m.string().includes('PLANTED-CANARY'), 'the stream never held it');
      assert.equal((JSON.parse(m.string()) as { data: Record<string, unknown> }).data['trigger'], 'user');
      watch.close();
    } finally {
      await nc.close();
      await a.close();
      await b.close();
    }
  });

  it('session ids cannot inject subjects: wildcards, dots and spaces stay one session each', async () => {
    const stream = streamName('J');
    const [a, b] = (await startCluster(ns, { port: 0 }, 2, stream)) as [RelayHandle, RelayHandle];
    try {
      const sessions = ['x', 'x.>', 'x.*', 'x y', '>', `${'long'.repeat(60)}.*`];
      for (const s of sessions) {
        const src = { source: 'aep://test/agent/inject' };
        const r = await post(a.url, [ev('session.started', s, 0, src), ev('progress.status', s, 1, src)]);
        assert.equal(r.status, 202, `${s}: ${r.body}`);
      }
      for (const s of sessions) {
        let got: Array<Record<string, unknown>> = [];
        for (let i = 0; i < 100; i++) {
          // (A filter may not hold `*` outside a type pattern: read everything, pick the session.)
          const r = await http(`${b.url}/stream?live=0&from=all`);
          got = r.body
            .split('\n')
            .filter((l) => l.startsWith('data: '))
            .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
            .filter((e) => e['session'] === s);
          if (got.length >= 2) break;
          await sleep(50);
        }
        assert.deepEqual(
          got.map((e) => `${String(e['session'])}:${String(e['seq'])}`),
          [`${s}:0`, `${s}:1`],
          s,
        );
      }
      for (const s of sessions) assert.match(sessionToken(s), /^[bh][A-Za-z0-9_-]+$/);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
