// Scoped tokens (issue 12 item 4; contract C7): the admin API, storage (hashed, in the store),
// and enforcement on every endpoint; every refusal names the missing scope. The owner token
// keeps every scope.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '@aep/relay';
import { WsClient, cmd, ev, http, post, sleep, sse, ulid } from './helpers.js';

const OWNER = 'owner-token-0123456789abcdef';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Created {
  id: string;
  token: string;
  name: string;
  scopes: string[];
  created: string;
  expires?: string;
}

async function create(relay: RelayHandle, body: unknown, by = OWNER): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await http(`${relay.url}/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${by}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: r.json as Record<string, unknown> };
}
async function token(relay: RelayHandle, scopes: string[], name = 'test'): Promise<Created> {
  const r = await create(relay, { name, scopes });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  return r.json as unknown as Created;
}
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('scoped tokens: admin API', () => {
  let relay: RelayHandle;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null, token: OWNER });
  });
  after(async () => {
    await relay.close();
  });

  it('POST /tokens -> 201 with the token shown once; GET lists without secrets; DELETE revokes', async () => {
    const r = await create(relay, { name: 'phone', scopes: ['read', 'answer:kind=form'], expires: '2099-01-01T00:00:00Z' });
    assert.equal(r.status, 201);
    const t = r.json as unknown as Created;
    assert.deepEqual(Object.keys(t), ['id', 'token', 'name', 'scopes', 'created', 'expires']);
    assert.match(t.id, /^[0-9a-f]{16}$/);
    assert.match(t.token, new RegExp(`^aep_${t.id}_[A-Za-z0-9_-]{43}$`));
    assert.deepEqual(t.scopes, ['read:metadata', 'answer:kind=form'], 'bare read is read:metadata');
    assert.equal(t.expires, '2099-01-01T00:00:00.000Z');
    const list = await http(`${relay.url}/tokens`, { headers: bearer(OWNER) });
    assert.equal(list.status, 200);
    const entry = (list.json as { tokens: Array<Record<string, unknown>> }).tokens.find((x) => x['id'] === t.id)!;
    assert.deepEqual(Object.keys(entry), ['id', 'name', 'scopes', 'created', 'expires']);
    assert.ok(!list.body.includes(t.token.slice(`aep_${t.id}_`.length)), 'the secret is never listed');
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(t.token) })).status, 200);
    const del = await http(`${relay.url}/tokens/${t.id}`, { method: 'DELETE', headers: bearer(OWNER) });
    assert.equal(del.status, 200);
    assert.deepEqual(del.json, { id: t.id, revoked: true });
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(t.token) })).status, 401);
    const after2 = (await http(`${relay.url}/tokens`, { headers: bearer(OWNER) })).json as { tokens: Array<Record<string, unknown>> };
    assert.ok(typeof after2.tokens.find((x) => x['id'] === t.id)!['revoked'] === 'string');
    assert.equal((await http(`${relay.url}/tokens/${t.id}`, { method: 'DELETE', headers: bearer(OWNER) })).status, 200, 'idempotent');
    assert.equal((await http(`${relay.url}/tokens/0123456789abcdef`, { method: 'DELETE', headers: bearer(OWNER) })).status, 404);
  });

  it('only the owner or an admin token manages tokens; refusals name the scope', async () => {
    const reader = await token(relay, ['read:full', 'emit', 'answer', 'permit', 'steer']);
    const r = await create(relay, { scopes: ['read'] }, reader.token);
    assert.equal(r.status, 403);
    assert.deepEqual(r.json, { error: 'forbidden', detail: 'token lacks scope admin' });
    assert.equal((await http(`${relay.url}/tokens`, { headers: bearer(reader.token) })).status, 403);
    assert.equal((await http(`${relay.url}/tokens`)).status, 401);
    const admin = await token(relay, ['admin']);
    const made = await create(relay, { scopes: ['read:redacted'] }, admin.token);
    assert.equal(made.status, 201);
    assert.equal((await http(`${relay.url}/tokens/${String(made.json['id'])}`, { method: 'DELETE', headers: bearer(admin.token) })).status, 200);
  });

  it('bad token requests are refused 400 naming the rule', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ scopes: [] }, /non-empty array/],
      [{ scopes: ['write'] }, /unknown scope "write"/],
      [{ scopes: ['read:toString'] }, /level must be one of/],
      [{ scopes: ['read:__proto__'] }, /level must be one of/],
      [{ scopes: ['emit:kind=form'] }, /unknown constraint key "kind"/],
      [{ scopes: ['answer:agent='] }, /needs a value/],
      [{ scopes: ['admin:agent=x'] }, /admin takes no constraints/],
      [{ scopes: ['read'], expires: '2000-01-01T00:00:00Z' }, /in the future/],
      [{ scopes: ['read'], expires: 'tomorrow' }, /RFC 3339/],
      [{ scopes: ['read'], owner: true }, /unknown member "owner"/],
      [['read'], /JSON object/],
    ];
    for (const [body, re] of cases) {
      const r = await create(relay, body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.json['error'], 'bad-request');
      assert.match(String(r.json['detail']), re, JSON.stringify(body));
    }
  });

  it('a relay without an owner token has no token management', async () => {
    const open = await startRelay({ port: 0, storePath: null });
    const r = await http(`${open.url}/tokens`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ scopes: ['read'] }) });
    assert.equal(r.status, 403);
    assert.equal((r.json as Record<string, unknown>)['error'], 'forbidden');
    await open.close();
  });
});

describe('scoped tokens: stored hashed, survive a restart', () => {
  it('the store holds the digest, never the token; the token works after a restart; revocation too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'aep-tokens-'));
    dirs.push(dir);
    const storePath = join(dir, 'relay.sqlite');
    let relay = await startRelay({ port: 0, storePath, token: OWNER });
    const keep = await token(relay, ['read']);
    const gone = await token(relay, ['read']);
    assert.equal((await http(`${relay.url}/tokens/${gone.id}`, { method: 'DELETE', headers: bearer(OWNER) })).status, 200);
    await relay.close();
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString('latin1');
      // The whole secret (it is base64url and may itself hold '_': split('_') could cut a 1-char piece).
      assert.ok(
        !bytes.includes(keep.token.slice(`aep_${keep.id}_`.length)) && !bytes.includes(gone.token.slice(`aep_${gone.id}_`.length)),
        `${f} holds a token secret`,
      );
    }
    relay = await startRelay({ port: 0, storePath, token: OWNER });
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(keep.token) })).status, 200);
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(gone.token) })).status, 401);
    await relay.close();
  });
});

describe('scoped tokens: enforcement', () => {
  let relay: RelayHandle;
  before(async () => {
    relay = await startRelay({ port: 0, storePath: null, token: OWNER });
  });
  after(async () => {
    await relay.close();
  });

  it('read: SSE and WebSocket never above the token level, whatever is asked; no read scope -> refused naming it', async () => {
    const S = `rd-${ulid()}`;
    const e = ev('run.started', S, 0, { run: 'r', capture: 'redacted', data: { trigger: 'user', prompt: 'CANARY redacted text' } });
    assert.equal((await post(relay.url, e, OWNER)).status, 202);
    const meta = await token(relay, ['read:metadata']);
    const red = await token(relay, ['read:redacted', 'read:metadata']);
    const none = await token(relay, ['emit']);
    const f = encodeURIComponent(JSON.stringify({ session: S }));
    for (const q of ['', '&capture=full', '&capture=redacted']) {
      const r = await http(`${relay.url}/stream?live=0&filter=${f}${q}`, { headers: bearer(meta.token) });
      assert.equal(r.status, 200);
      assert.ok(!r.body.includes('CANARY'), q);
      assert.match(r.body, /"capture":"metadata"/);
    }
    const r2 = await http(`${relay.url}/stream?live=0&filter=${f}&access_token=${red.token}`);
    assert.ok(r2.body.includes('CANARY'), 'the most permissive read scope counts');
    const r3 = await http(`${relay.url}/stream?live=0&filter=${f}&capture=none`, { headers: bearer(red.token) });
    assert.ok(!r3.body.includes('"data"'), 'a lower requested ceiling still applies');
    const refused = await http(`${relay.url}/stream`, { headers: bearer(none.token) });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json, { error: 'forbidden', detail: 'token lacks scope read' });
    // WebSocket: subscribe capped; without read, subscribe and roster refused in-band.
    const w = await WsClient.open(relay.url, meta.token);
    await w.hello();
    w.send({ type: 'subscribe', id: 'a', filter: { session: S }, from: 'all', capture: 'full' });
    const got = await w.waitFor((x) => x['id'] === e['id']);
    assert.equal(got['capture'], 'metadata');
    assert.ok(!w.texts.join('').includes('CANARY'));
    w.close();
    const n = await WsClient.open(relay.url, none.token);
    await n.hello();
    n.send({ type: 'subscribe', id: 'b' });
    const sub = await n.waitFor((x) => x['id'] === 'b');
    assert.equal(sub['code'], 'unauthorized');
    assert.equal(sub['detail'], 'token lacks scope read');
    n.send({ type: 'roster', id: 'c' });
    assert.equal((await n.waitFor((x) => x['id'] === 'c'))['detail'], 'token lacks scope read');
    assert.equal(n.closed, false);
    n.close();
    // healthz counters only for readers / admins.
    assert.deepEqual((await http(`${relay.url}/healthz`, { headers: bearer(none.token) })).json, { ok: true });
    assert.equal(typeof ((await http(`${relay.url}/healthz`, { headers: bearer(meta.token) })).json as Record<string, unknown>)['held'], 'number');
  });

  it('emit: limited to its agents/sessions over HTTP and WebSocket; the batch is refused whole, naming the line', async () => {
    const S1 = `em1-${ulid()}`;
    const S2 = `em2-${ulid()}`;
    const t = await token(relay, [`emit:session=${S1},agent=aep-live-check`, 'read:full']);
    assert.equal((await post(relay.url, ev('session.started', S1, 0), t.token)).status, 202);
    const r = await post(relay.url, [ev('progress.status', S1, 1), ev('session.started', S2, 0)], t.token);
    assert.equal(r.status, 403);
    assert.deepEqual(r.json, { error: 'forbidden', detail: `token lacks scope emit:agent=aep-live-check,session=${S2}`, line: 1 });
    const noEmit = await token(relay, ['read']);
    assert.equal((await post(relay.url, ev('session.started', S1, 5), noEmit.token)).status, 403);
    const held = await http(`${relay.url}/stream?live=0&filter=${encodeURIComponent(JSON.stringify({ session: S1 }))}`, { headers: bearer(OWNER) });
    assert.equal(held.body.split('\n').filter((l) => l.startsWith('data: ')).length, 1, 'nothing of a refused batch was ingested');
    const w = await WsClient.open(relay.url, t.token);
    await w.hello('emitter');
    const bad = ev('session.started', S2, 0);
    w.send(bad);
    const err = await w.waitFor((f) => f['type'] === 'error' && f['cause'] === bad['id']);
    assert.equal(err['code'], 'unauthorized');
    assert.equal(err['detail'], `token lacks scope emit:agent=aep-live-check,session=${S2}`);
    w.close();
  });

  it('answers need answer, permission answers need permit (the relay knows the kind), steering needs steer', async () => {
    const S = `ans-${ulid()}`;
    const target = await WsClient.open(relay.url, OWNER);
    target.send({
      type: 'hello',
      versions: ['0.1'],
      role: 'emitter',
      identity: { agent: 'agent-a' },
      capabilities: { control: { accepts: ['control.attention.respond', 'control.cancel'] } },
    });
    await target.waitFor((f) => f['type'] === 'hello');
    const base = { source: `aep://h/agent/agent-a/session/${S}`, agent: 'agent-a' };
    const perm = ev('attention.requested', S, 0, {
      ...base,
      subject: 'Bash',
      data: {
        kind: 'permission',
        prompt: 'rm?',
        options: [
          { id: 'allow', label: 'Allow' },
          { id: 'deny', label: 'Deny' },
        ],
      },
    });
    const form = ev('attention.requested', S, 1, {
      ...base,
      subject: 'f',
      data: { kind: 'form', prompt: 'f', fields: [{ id: 'a', type: 'boolean', label: 'a' }] },
    });
    const question = ev('attention.requested', S, 2, { ...base, subject: 'q', data: { kind: 'question', prompt: 'q', options: [{ id: 'y', label: 'y' }] } });
    for (const e of [perm, form, question]) target.send(e);
    await sleep(100);
    const answerer = await token(relay, ['answer']);
    const permitter = await token(relay, ['permit']);
    const formsOnly = await token(relay, ['answer:kind=form']);
    const otherAgent = await token(relay, ['answer:agent=agent-b', 'permit:agent=agent-b', 'steer:agent=agent-b']);
    const steerer = await token(relay, [`steer:session=${S}`]);
    const both = await token(relay, ['answer', 'permit']);
    const send = async (tok: string, c: Record<string, unknown>): Promise<Record<string, unknown> | null> => {
      const s = await WsClient.open(relay.url, tok);
      await s.hello();
      s.send(c);
      const outcome = await Promise.race([
        s.waitFor((f) => f['type'] === 'error' && f['cause'] === c['id']),
        target.waitFor((f) => f['id'] === c['id']).then(() => null),
      ]);
      s.close();
      return outcome;
    };
    const respond = (subject: unknown) => cmd('control.attention.respond', S, { subject, data: { answer: { option: 'allow' } } });
    assert.equal(await send(answerer.token, respond(form['id'])), null, 'answer answers a form');
    assert.equal(await send(answerer.token, respond(question['id'])), null);
    const p1 = await send(answerer.token, respond(perm['id']));
    assert.equal(p1?.['code'], 'unauthorized');
    assert.equal(p1?.['detail'], `token lacks scope permit:agent=agent-a,session=${S}`);
    assert.equal(await send(permitter.token, respond(perm['id'])), null, 'permit answers a permission request');
    assert.equal((await send(permitter.token, respond(form['id'])))?.['detail'], `token lacks scope answer:agent=agent-a,session=${S},kind=form`);
    assert.equal(await send(formsOnly.token, respond(form['id'])), null);
    assert.equal((await send(formsOnly.token, respond(question['id'])))?.['detail'], `token lacks scope answer:agent=agent-a,session=${S},kind=question`);
    assert.match(String((await send(otherAgent.token, respond(form['id'])))?.['detail']), /^token lacks scope answer:agent=agent-a/);
    // A request the relay does not hold may be a permission request: both scopes are needed.
    const unknown = await send(answerer.token, respond(ulid()));
    assert.match(
      String(unknown?.['detail']),
      /^token lacks scope permit:agent=agent-a,session=.* \(the relay does not hold request .*: it may be a permission request\)$/,
    );
    assert.equal(await send(both.token, respond(ulid())), null);
    // Steering.
    const cancel = () => cmd('control.cancel', S, { data: { scope: 'session' } });
    assert.equal((await send(answerer.token, cancel()))?.['detail'], `token lacks scope steer:agent=agent-a,session=${S}`);
    assert.match(String((await send(otherAgent.token, cancel()))?.['detail']), /^token lacks scope steer/);
    assert.equal(await send(steerer.token, cancel()), null);
    assert.equal(await send(OWNER, cancel()), null, 'the owner token holds every scope');
    target.close();
  });

  it('a revoked token loses its live connections; an expired one stops working', async () => {
    const t = await token(relay, ['read:full']);
    const w = await WsClient.open(relay.url, t.token);
    await w.hello();
    w.send({ type: 'subscribe', id: 's' });
    await w.waitFor((f) => f['type'] === 'subscribed');
    const s = sse(relay.url, '', { token: t.token });
    assert.equal(await s.status, 200);
    assert.equal((await http(`${relay.url}/tokens/${t.id}`, { method: 'DELETE', headers: bearer(OWNER) })).status, 200);
    assert.equal((await w.waitFor((f) => f['type'] === 'closing'))['reason'], 'revoked');
    assert.equal(await w.waitClosed(), 1008);
    await s.ended;
    const r = await create(relay, { scopes: ['read'], expires: new Date(Date.now() + 2000).toISOString() });
    const short = r.json as unknown as Created;
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(short.token) })).status, 200);
    while (Date.now() <= Date.parse(short.expires!) + 20) await sleep(100);
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(short.token) })).status, 401);
    await assert.rejects(WsClient.open(relay.url, short.token), /401/);
  });
});
