// A relay that joins a running cluster rebuilds everything from JetStream (issue 16): the held
// Events and their order, the eviction tombstones (replay-exhausted at the same earliest), the
// request bindings (C3) and the tokens.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { RelayHandle } from '@aep/relay';
import { WsClient, cmd, ev, http, post, sleep, ulid } from '../../relay/test/support/probes.js';
import { startCluster, streamName } from './cluster.js';
import { NatsServer } from './nats-server.js';

const TOKEN = 'rebuild-token-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('a relay joining later rebuilds from the stream', () => {
  let ns: NatsServer;
  before(async () => {
    ns = await NatsServer.start();
  });
  after(async () => {
    await ns.dispose();
  });

  it('held Events, tombstones, bindings and tokens are the same at a relay started afterwards', async () => {
    const stream = streamName('L');
    const [a] = (await startCluster(ns, { port: 0, token: TOKEN, bufferDepth: 4 }, 1, stream)) as [RelayHandle];
    let late: RelayHandle | undefined;
    try {
      const s = `evict-${ulid()}`;
      assert.equal(
        (
          await post(
            a.url,
            Array.from({ length: 10 }, (_, i) => ev('progress.status', s, i)),
            TOKEN,
          )
        ).status,
        202,
      );
      const from = encodeURIComponent(JSON.stringify([{ session: s, epoch: 0, seq: 0 }]));
      const atA = await http(`${a.url}/stream?live=0&from=${from}`, { headers: auth });
      assert.match(atA.body, new RegExp(`^: replay-exhausted ${s} 0:6$`, 'm'));
      // A request raised over a socket with a claim (C3), and a scoped token.
      const claim = `claim_${ulid()}`;
      const asker = await WsClient.open(a.url, TOKEN);
      asker.send({
        type: 'hello',
        versions: ['0.1'],
        role: 'emitter',
        identity: { agent: 'asker' },
        claim,
        capabilities: { control: { accepts: ['control.attention.respond'], ack_window_ms: 1000 } },
      });
      await asker.waitFor((f) => f['type'] === 'hello');
      const q = `ask-${ulid()}`;
      asker.send(ev('session.started', q, 0));
      const req = ev('attention.requested', q, 1, { data: { kind: 'question', prompt: 'Which?' } });
      asker.send(req);
      const made = await http(`${a.url}/tokens`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ scopes: ['read'] }),
      });
      assert.equal(made.status, 201);
      await sleep(300); // tombstone and claim writes are asynchronous KV puts

      [late] = await startCluster(ns, { port: 0, token: TOKEN, bufferDepth: 4 }, 1, stream);
      const atLate = await http(`${late!.url}/stream?live=0&from=${from}`, { headers: auth });
      assert.equal(atLate.body, atA.body, 'the same marker and the same raw bytes');
      assert.equal(
        (await http(`${late!.url}/stream?live=0`, { headers: { authorization: `Bearer ${(made.json as { token: string }).token}` } })).status,
        200,
        'the token works at the new relay',
      );
      // Its answer goes to the asker at A, bound by the claim digest the stream carries.
      const snd = await WsClient.open(late!.url, TOKEN);
      await snd.hello();
      const ans = cmd('control.attention.respond', q, { subject: req['id'], cause: req['id'], data: { answer: { option: 'a' } } });
      snd.send(ans);
      await asker.waitFor((f) => f['id'] === ans['id']);
      asker.close();
      snd.close();
    } finally {
      await a.close();
      await late?.close();
    }
  });

  it('a relay that drains (C5) hands what its emitters send meanwhile to the stream before it stops', async () => {
    const stream = streamName('D');
    const [a, b] = (await startCluster(ns, { port: 0, token: TOKEN }, 2, stream)) as [RelayHandle, RelayHandle];
    try {
      const s = `drain-${ulid()}`;
      const em = await WsClient.open(a.url, TOKEN);
      em.send({ type: 'hello', versions: ['0.1'], role: 'emitter', identity: { agent: 'drainer' } });
      await em.waitFor((f) => f['type'] === 'hello');
      em.send(ev('session.started', s, 0));
      await sleep(100);
      const closing = a.close({ drainMs: 5000 });
      for (let i = 1; i <= 20; i++) em.send(ev('progress.status', s, i));
      await sleep(50);
      em.ws.close();
      await closing;
      const filter = encodeURIComponent(JSON.stringify({ session: s }));
      let seqs: unknown[] = [];
      for (let i = 0; i < 100 && seqs.length < 21; i++) {
        const r = await http(`${b.url}/stream?live=0&filter=${filter}`, { headers: auth });
        seqs = r.body
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => (JSON.parse(l.slice(6)) as Record<string, unknown>)['seq']);
        if (seqs.length < 21) await sleep(50);
      }
      assert.deepEqual(
        seqs,
        Array.from({ length: 21 }, (_, i) => i),
      );
    } finally {
      await a.close();
      await b.close();
    }
  });
});
