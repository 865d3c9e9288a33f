// Token management when the store cannot commit (issue 20, the http.ts ingest range's
// survivors): the 503 names the rule and says what to do, the operator's log says why, a token
// whose creation was not committed is never shown nor logged as created, and a revocation cuts
// the token's live connections at once even when its commit fails (the token is refused in
// memory from the DELETE on; leaving its streams open until a retry would let a revoked reader
// keep reading). The store's commit seam (`storeCommitHook`) fails commits like a full disk.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '@aep/relay';
import { http, sse } from './helpers.js';

const OWNER = 'admin-commit-owner-0123456789';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function storePath(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-admin-commit-'));
  dirs.push(d);
  return join(d, 'relay.sqlite');
}
const bearer = (t: string) => ({ authorization: `Bearer ${t}` });
const UNAVAILABLE = { error: 'store-unavailable', detail: 'the durable store could not commit; retry with the same Event ids' };

/** A relay on a fresh store whose commits fail while `fail.on` is set; its log lines are kept. */
async function failingRelay(path = storePath()) {
  const fail = { on: false };
  const log: string[] = [];
  const relay = await startRelay({
    port: 0,
    storePath: path,
    token: OWNER,
    log: (l) => log.push(l),
    storeCommitHook: () => {
      if (fail.on) throw new Error('disk full (test)');
    },
  });
  return { relay, fail, log, path };
}
function createToken(url: string, scopes: string[]) {
  return http(`${url}/tokens`, {
    method: 'POST',
    headers: { ...bearer(OWNER), 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'reader', scopes }),
  });
}
/** Resolves true when `p` settles within 5 s, false otherwise (the test then fails by value). */
const within5s = (p: Promise<unknown>): Promise<boolean> =>
  Promise.race([p.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5000).unref())]);

describe('token management when the store cannot commit', () => {
  it('POST /tokens: 503 store-unavailable with its detail; the log says why; the token is neither shown nor logged as created', async (t) => {
    const { relay, fail, log } = await failingRelay();
    t.after(() => relay.close());
    fail.on = true;
    const r = await createToken(relay.url, ['read']);
    assert.equal(r.status, 503);
    assert.deepEqual(r.json, UNAVAILABLE);
    assert.ok(!r.body.includes('aep_'), 'no secret in the answer');
    assert.ok(
      log.some((l) => /^store write failed: .*disk full \(test\)/.test(l)),
      `the operator's log names the cause: ${JSON.stringify(log)}`,
    );
    assert.ok(!log.some((l) => /^token .* created/.test(l)), `nothing logged as created: ${JSON.stringify(log)}`);
    fail.on = false;
    const ok = await createToken(relay.url, ['read']);
    assert.equal(ok.status, 201);
    const id = (ok.json as { id: string }).id;
    assert.ok(
      log.some((l) => l.startsWith(`token ${id} created (`)),
      `a committed creation is logged: ${JSON.stringify(log)}`,
    );
  });

  it('DELETE /tokens/:id: a failed commit answers 503, yet the live streams of the token end at once and it is refused; a retry commits the revocation', async (t) => {
    const { relay, fail, log, path } = await failingRelay();
    t.after(() => relay.close());
    const made = await createToken(relay.url, ['read:full']);
    assert.equal(made.status, 201);
    const tok = made.json as { id: string; token: string };
    const s = sse(relay.url, '', { token: tok.token });
    assert.equal(await s.status, 200);
    fail.on = true;
    const del = await http(`${relay.url}/tokens/${tok.id}`, { method: 'DELETE', headers: bearer(OWNER) });
    assert.equal(del.status, 503);
    assert.deepEqual(del.json, UNAVAILABLE);
    assert.equal(await within5s(s.ended), true, "the revoked token's live stream was ended despite the failed commit");
    assert.equal((await http(`${relay.url}/events`, { headers: bearer(tok.token) })).status, 401, 'the token is refused from the DELETE on');
    assert.ok(!log.includes(`token ${tok.id} revoked`), 'not logged as revoked before the commit');
    fail.on = false;
    const again = await http(`${relay.url}/tokens/${tok.id}`, { method: 'DELETE', headers: bearer(OWNER) });
    assert.equal(again.status, 200);
    assert.deepEqual(again.json, { id: tok.id, revoked: true });
    assert.ok(log.includes(`token ${tok.id} revoked`));
    await relay.close();
    const back = await startRelay({ port: 0, storePath: path, token: OWNER });
    assert.equal((await http(`${back.url}/events`, { headers: bearer(tok.token) })).status, 401, 'the retried revocation is durable');
    await back.close();
  });
});
