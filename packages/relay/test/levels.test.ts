// Levels and severities are looked up by own property only (issue 12 item 2): prototype names
// are not capture levels nor severities, everywhere the relay accepts one.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, ev, http, post, ulid } from './helpers.js';

const PROTO_NAMES = ['toString', 'constructor', '__proto__', 'hasOwnProperty', 'valueOf', 'isPrototypeOf'];

describe('prototype names are not levels', () => {
  let relay: RelayHandle;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null });
  });
  after(async () => {
    await relay.close();
  });

  it('SSE ?capture=<prototype name> is refused 400 invalid-filter before any stream', async () => {
    for (const name of PROTO_NAMES) {
      const r = await http(`${relay.url}/stream?capture=${encodeURIComponent(name)}`);
      assert.equal(r.status, 400, name);
      assert.equal((r.json as Record<string, unknown>)['error'], 'invalid-filter', name);
      assert.match(String((r.json as Record<string, unknown>)['detail']), /capture must be one of none, metadata, redacted, full/);
    }
  });

  it('SSE filter {"severity":{"gte"|"lte": <prototype name>}} is refused 400 invalid-filter', async () => {
    for (const name of PROTO_NAMES) {
      for (const op of ['gte', 'lte']) {
        const f = encodeURIComponent(JSON.stringify({ severity: { [op]: name } }));
        const r = await http(`${relay.url}/stream?filter=${f}`);
        assert.equal(r.status, 400, `${op} ${name}`);
        assert.equal((r.json as Record<string, unknown>)['error'], 'invalid-filter');
        assert.match(String((r.json as Record<string, unknown>)['detail']), /severity/);
      }
    }
  });

  it('WebSocket subscribe with such a capture or severity gets an invalid-filter frame; the socket keeps working', async () => {
    const c = await WsClient.open(relay.url);
    await c.hello();
    for (const name of PROTO_NAMES) {
      c.send({ type: 'subscribe', id: `cap-${name}`, capture: name });
      const e = await c.waitFor((f) => f['id'] === `cap-${name}`);
      assert.equal(e['type'], 'error', name);
      assert.equal(e['code'], 'invalid-filter', name);
      c.send({ type: 'subscribe', id: `sev-${name}`, filter: { severity: { gte: name } } });
      const s = await c.waitFor((f) => f['id'] === `sev-${name}`);
      assert.equal(s['code'], 'invalid-filter', name);
    }
    // No refused subscription was registered: an Event reaches only the one valid subscription.
    const S = `lv-${ulid()}`;
    c.send({ type: 'subscribe', id: 'ok', filter: { session: S }, capture: 'metadata' });
    await c.waitFor((f) => f['id'] === 'ok' && f['type'] === 'subscribed');
    const e = ev('run.started', S, 0, { run: 'r', capture: 'redacted', data: { trigger: 'user', prompt: 'CANARY' } });
    assert.equal((await post(relay.url, e)).status, 202);
    const got = await c.waitFor((f) => f['id'] === e['id']);
    assert.equal(got['capture'], 'metadata');
    assert.ok(!JSON.stringify(c.frames).includes('CANARY'));
    assert.equal(c.closed, false);
    c.close();
  });

  it('an Event whose capture or severity is a prototype name is refused 400 invalid-event', async () => {
    for (const name of PROTO_NAMES) {
      const a = await post(relay.url, ev('progress.status', `lv-e-${ulid()}`, 0, { capture: name }));
      assert.equal(a.status, 400, name);
      assert.equal((a.json as Record<string, unknown>)['error'], 'invalid-event');
      const b = await post(relay.url, ev('progress.status', `lv-e-${ulid()}`, 0, { severity: name }));
      assert.equal(b.status, 400, name);
    }
  });
});
