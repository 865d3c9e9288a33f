// Capture is enforced by the relay, not trusted (issue 12 item 1): a lying Event is made honest
// before it is stored or fanned out; an honest one keeps its exact bytes; members no schema
// annotates reach only `full`; a routed command reaches its target as sent, while its history
// copy is honest.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, cmd, ev, http, post, sleep, sse, ulid } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-capture-'));
  dirs.push(d);
  return join(d, 'relay.sqlite');
}

function dataLines(body: string): string[] {
  return body
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6));
}

async function replay(relay: RelayHandle, session: string, capture?: string, token?: string): Promise<string[]> {
  const q = `live=0&filter=${encodeURIComponent(JSON.stringify({ session }))}${capture ? `&capture=${capture}` : ''}`;
  const r = await http(`${relay.url}/stream?${q}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  assert.equal(r.status, 200);
  return dataLines(r.body);
}

describe('capture enforcement', () => {
  it('a lying Event (free text declared metadata) is made honest before store, fan-out and replay', async () => {
    const path = storePath();
    const relay = await startRelay({ port: 0, storePath: path });
    const S = `lie-${ulid()}`;
    const live = sse(relay.url, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
    await live.status;
    const lie = ev('run.started', S, 0, { run: 'r1', capture: 'metadata', data: { trigger: 'user', prompt: 'CANARY-LIE my password is hunter2' } });
    const lieFull = ev('tool.requested', S, 1, {
      capture: 'redacted',
      data: { tool: { name: 'Bash' }, args: { command: 'CANARY-FULL cat ~/.ssh/id_rsa' }, args_redacted: { command: 'cat ~/.ssh/id_rsa' } },
    });
    const noneWithData = ev('progress.status', S, 2, { capture: 'none', data: { message: 'CANARY-NONE', percent: 5 } });
    assert.equal((await post(relay.url, [lie, lieFull, noneWithData])).status, 202);
    await live.waitFor((m) => m.filter((x) => x.data).length >= 3);
    const seen = [live.raw(), ...(await replay(relay, S))].join('\n');
    assert.ok(!seen.includes('CANARY'), seen);
    const [a, b, c] = live.events();
    assert.deepEqual(a!['data'], { trigger: 'user' });
    assert.equal(a!['capture'], 'metadata');
    assert.deepEqual(b!['data'], { tool: { name: 'Bash' }, args_redacted: { command: 'cat ~/.ssh/id_rsa' } });
    assert.equal('data' in c!, false);
    assert.equal(relay.stats().regated, 3);
    live.close();
    await relay.close();
    // The store holds the honest copy, never the lie.
    const again = await startRelay({ port: 0, storePath: path });
    const stored = await replay(again, S);
    assert.equal(stored.length, 3);
    assert.ok(!stored.join('\n').includes('CANARY'));
    await again.close();
  });

  it('an honest Event keeps its exact bytes on SSE, WebSocket and after a restart', async () => {
    const path = storePath();
    const relay = await startRelay({ port: 0, storePath: path });
    const S = `honest-${ulid()}`;
    const request = ev('attention.requested', S, 3, {
      subject: 'q',
      capture: 'redacted',
      severity: 'notice',
      data: { kind: 'form', prompt: 'Pick one', fields: [{ id: 'a', type: 'select', label: 'Colour', choices: [{ id: 'r', label: 'Red' }] }] },
    });
    const lines = [
      JSON.stringify(ev('run.started', S, 0, { run: 'r', capture: 'redacted', data: { trigger: 'user', prompt: 'Summarise ~/notes.md for [REDACTED:pii]' } })),
      JSON.stringify(
        ev('tool.requested', S, 1, { capture: 'full', data: { tool: { name: 'Bash' }, args: { command: 'ls -la' }, extra: 'anything goes at full' } }),
      ),
      JSON.stringify(ev('tool.completed', S, 2, { data: { tool: { name: 'Bash' }, status: 'success', duration_ms: 12 } })),
      JSON.stringify(request),
      JSON.stringify(ev('attention.answered', S, 4, { subject: request['id'], data: { answer: { values: { a: 'r' } }, via: 'control' } })),
      `{"aep":"0.1","id":"${ulid()}","type":"control.rejected","time":"2026-01-01T00:00:00Z","source":"aep://x","agent":"a","session":"${S}","seq":5,  "capture":"redacted","data":{"reason":"invalid","detail":"field a: not a choice"}}`,
    ];
    const live = sse(relay.url, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`);
    await live.status;
    const ws = await WsClient.open(relay.url);
    await ws.hello();
    ws.send({ type: 'subscribe', id: 's', filter: { session: S } });
    await ws.waitFor((f) => f['type'] === 'subscribed');
    const r = await http(`${relay.url}/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1' },
      body: lines.join('\n') + '\n',
    });
    assert.equal(r.status, 202);
    await live.waitFor((m) => m.filter((x) => x.data).length >= lines.length);
    await ws.waitFor(() => ws.texts.filter((t) => t.includes('"aep"')).length >= lines.length);
    assert.deepEqual(
      live.messages.filter((m) => m.data).map((m) => m.data),
      lines,
    );
    assert.deepEqual(
      ws.texts.filter((t) => t.includes('"aep"')),
      lines,
    );
    assert.equal(relay.stats().regated, 0);
    live.close();
    ws.close();
    await relay.close();
    const again = await startRelay({ port: 0, storePath: path });
    assert.deepEqual(await replay(again, S), lines);
    await again.close();
  });

  it('unannotated members (control.rejected issues, vendor extras, x.* data) reach only full and as-received readers', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const S = `unannot-${ulid()}`;
    const rejected = ev('control.rejected', S, 0, {
      cause: 'c1',
      data: { reason: 'invalid', issues: [{ rule: 'form.type-mismatch', path: '/data/answer/values/pw', message: 'got "hunter2-CANARY"' }] },
    });
    const extra = ev('tool.completed', S, 1, { data: { tool: { name: 'x' }, status: 'success', note: 'CANARY-extra' } });
    const vendor = ev('x.acme.tool.done', S, 2, { data: { text: 'CANARY-vendor' } });
    assert.equal((await post(relay.url, [rejected, extra, vendor])).status, 202);
    for (const c of ['none', 'metadata', 'redacted']) {
      const got = await replay(relay, S, c);
      assert.equal(got.length, 3, c);
      assert.ok(!got.join('\n').includes('CANARY'), `${c}: ${got.join('\n')}`);
      const [r0, r1, r2] = got.map((l) => JSON.parse(l) as Record<string, unknown>);
      if (c !== 'none') {
        assert.deepEqual(r0!['data'], { reason: 'invalid' }, c);
        assert.deepEqual(r1!['data'], { tool: { name: 'x' }, status: 'success' }, c);
      }
      assert.equal('data' in r2!, false, c);
    }
    for (const c of ['full', undefined]) {
      const got = await replay(relay, S, c);
      assert.deepEqual(got, [JSON.stringify(rejected), JSON.stringify(extra), JSON.stringify(vendor)], String(c));
    }
    // The same over a WebSocket subscription at metadata.
    const ws = await WsClient.open(relay.url);
    await ws.hello();
    ws.send({ type: 'subscribe', id: 'm', filter: { session: S }, from: 'all', capture: 'metadata' });
    await ws.waitFor(() => ws.texts.filter((t) => t.includes('"aep"')).length >= 3);
    assert.ok(!ws.texts.join('\n').includes('CANARY'));
    ws.close();
    await relay.close();
  });

  it('free text claimed redacted without the §9.4 pipeline is redacted by the relay (a leaked key never passes)', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const S = `redact-${ulid()}`;
    const key = 'sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    const e = ev('progress.status', S, 0, { capture: 'redacted', data: { message: `deploying with OPENAI key ${key} now` } });
    const t = ev('attention.answered', S, 1, { subject: 'q', capture: 'redacted', data: { answer: { text: `password=hunter2secret and ${key}` } } });
    assert.equal((await post(relay.url, [e, t])).status, 202);
    const got = (await replay(relay, S)).join('\n');
    assert.ok(!got.includes(key) && !got.includes('hunter2secret'), got);
    assert.match(got, /\[REDACTED:secret\]/);
    await relay.close();
  });

  it('answer values below redacted keep only what the held request proves structural', async () => {
    const relay = await startRelay({ port: 0, storePath: null });
    const S = `values-${ulid()}`;
    const req = ev('attention.requested', S, 0, {
      subject: 'cfg',
      capture: 'redacted',
      severity: 'notice',
      data: {
        kind: 'form',
        prompt: 'Config',
        fields: [
          { id: 'pw', type: 'string', label: 'Password' },
          { id: 'n', type: 'number', label: 'Count' },
          { id: 'c', type: 'select', label: 'Colour', choices: [{ id: 'red', label: 'Red' }], other: true },
        ],
      },
    });
    const answered = ev('attention.answered', S, 1, {
      subject: req['id'],
      data: { answer: { values: { pw: 'hunter2-CANARY', n: 3, c: 'red' } }, via: 'control' },
    });
    const other = ev('attention.answered', S, 2, { subject: req['id'], data: { answer: { values: { c: 'mauve-CANARY', n: 4 } }, via: 'control' } });
    const unknownReq = ev('attention.answered', S, 3, {
      subject: 'not-held',
      data: { answer: { values: { c: 'red', pw: 'x-CANARY', n: 1 } }, via: 'control' },
    });
    assert.equal((await post(relay.url, [req, answered, other, unknownReq])).status, 202);
    const got = (await replay(relay, S)).map((l) => JSON.parse(l) as { data: { answer: { values: Record<string, unknown> } } });
    assert.deepEqual(got[1]!.data.answer.values, { n: 3, c: 'red' });
    assert.deepEqual(got[2]!.data.answer.values, { n: 4 });
    assert.deepEqual(got[3]!.data.answer.values, { n: 1 }, 'without the request: the hop rule (numbers and booleans only)');
    await relay.close();
  });

  it('a routed command reaches its target byte for byte; its history copy is honest', async () => {
    const TOKEN = 'capture-token-0123456789';
    const relay = await startRelay({ port: 0, storePath: null, token: TOKEN });
    const S = `cmd-${ulid()}`;
    const target = await WsClient.open(relay.url, TOKEN);
    target.send({
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: 't' },
      capabilities: { control: { accepts: ['control.attention.respond'] } },
    });
    await target.waitFor((f) => f['type'] === 'hello');
    target.send(ev('session.started', S, 0));
    await sleep(50);
    const watch = sse(relay.url, `filter=${encodeURIComponent(JSON.stringify({ session: S }))}`, { token: TOKEN });
    await watch.status;
    const sender = await WsClient.open(relay.url, TOKEN);
    await sender.hello();
    const c = cmd('control.attention.respond', S, { subject: ulid(), data: { answer: { text: 'CANARY typed secret' } } });
    const text = JSON.stringify(c);
    sender.send(text);
    await target.waitFor((f) => f['id'] === c['id']);
    assert.equal(
      target.texts.find((t) => t.includes(String(c['id']))),
      text,
      'the target receives exactly what was sent',
    );
    await watch.waitFor((m) => m.some((x) => x.data?.includes(String(c['id']))));
    const copy = watch.events().find((e) => e['id'] === c['id'])!;
    assert.deepEqual(copy['data'], { answer: {} });
    assert.ok(!watch.raw().includes('CANARY'));
    watch.close();
    target.close();
    sender.close();
    await relay.close();
  });
});
