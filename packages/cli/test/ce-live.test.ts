// `aep ce --sink` and `aep ce serve` end to end against a real relay (subprocess). The forwarder
// delivers to a real CloudEvents HTTP sink started here that checks every event against
// CloudEvents 1.0 JSON (structured mode, and batched mode); the sink goes down and comes back;
// the forwarder restarts and resumes. `ce serve` receives CloudEvents and the events land in the
// relay (read back over SSE), with every refusal answered by a stable code.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { ChildProcess } from 'node:child_process';
import { subscribe } from '@aep/client';
import { encodeCloudEvent } from '@aep/bridges';
import { spawnAep, startRelayProcess } from '../../../test/support/cli.js';
import { CeSink, makeEvents, postEvents, waitFor } from '../../bridges/test/support/receivers.js';

const TOKEN = `t-${randomBytes(8).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let dir: string;
let serve: Proc;
let serveUrl: string;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  dir = mkdtempSync(join(tmpdir(), 'aep-ce-live-'));
  serve = start(['ce', 'serve', '--port', '0', '--relay', relay.url, '--max-body', '65536', '--max-batch', '5']);
  await waitFor('the receiver listening line', () => /AEP CloudEvents receiver listening on (http:\/\/\S+)/.test(serve.stdout()));
  serveUrl = /listening on (http:\/\/\S+)/.exec(serve.stdout())![1]!;
});
after(async () => {
  await stop(serve);
  await relay.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Proc {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<number | null>;
}
function start(args: string[]): Proc {
  const child = spawnAep(args, { env: { ...process.env, AEP_TOKEN: TOKEN } });
  let err = '';
  let out = '';
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stderr: () => err, stdout: () => out, exited };
}
async function stop(p: Proc): Promise<number | null> {
  if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  return p.exited;
}
const forwarder = (sink: string, state: string, session: string, extra: string[] = []) =>
  start([
    'ce',
    '--relay',
    relay.url,
    '--sink',
    sink,
    '--state',
    state,
    '--filter',
    JSON.stringify({ session }),
    '--batch-size',
    '4',
    '--flush-ms',
    '20',
    '--max-queue',
    '8',
    '--retry-max-ms',
    '300',
    ...extra,
  ]);

function assertOnce(items: Record<string, unknown>[], emitted: Record<string, unknown>[]): void {
  const ids = items.map((c) => String(c['id']));
  assert.deepEqual(
    ids.filter((id, i) => ids.indexOf(id) !== i),
    [],
    'no duplicates',
  );
  assert.deepEqual([...ids].sort(), emitted.map((e) => String(e['id'])).sort(), 'no gaps');
  const seqs = items.map((c) => c['aepsequence'] as number);
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
    'in order',
  );
}

test('forwards every event as a structured-mode CloudEvent, once, in order, nothing above the ceiling; sink down and back; restart resumes', async (t) => {
  const sink = await new CeSink().start();
  t.after(() => sink.stop());
  const session = `c-${randomBytes(3).toString('hex')}`;
  const state = join(dir, 'fwd.json');
  const all = makeEvents('fwd', session, 0, 60).filter((e) => e['session'] === session);
  const [a, b, c] = [all.slice(0, 10), all.slice(10, 30), all.slice(30)];
  const f1 = forwarder(sink.url, state, session);
  t.after(() => stop(f1));
  await postEvents(relay.url, TOKEN, a!);
  await waitFor('part a', () => sink.items.length >= a!.length);
  await sink.stop();
  await postEvents(relay.url, TOKEN, b!);
  await waitFor('paused at the queue bound', () => /AEP_BRIDGE_PAUSED: 8 events held/.test(f1.stderr()));
  await sink.start();
  await waitFor('part b', () => sink.items.length >= a!.length + b!.length);
  assert.equal(await stop(f1), 0);
  await postEvents(relay.url, TOKEN, c!); // while no forwarder runs
  const f2 = forwarder(sink.url, state, session);
  t.after(() => stop(f2));
  await waitFor('part c', () => sink.items.length >= all.length);
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(sink.problems, [], 'every event is CloudEvents 1.0 JSON, structured mode');
  assert.ok(sink.requests.every((r) => r.contentType.startsWith('application/cloudevents+json')));
  assertOnce(sink.items, all);
  assert.doesNotMatch(JSON.stringify(sink.items), /CANARY/, 'nothing above the metadata ceiling');
  const run = sink.items.find((x) => x['type'] === 'dev.aep.run.started')!;
  assert.equal(run['aepcapture'], 'metadata');
  assert.deepEqual(run['data'], { trigger: 'user' });
  const one = all[1]!;
  const got = sink.items.find((x) => x['id'] === one['id'])!;
  const expected = encodeCloudEvent(one);
  assert.ok(expected.ok);
  assert.deepEqual(got, expected.value, 'exactly the forward mapping of the event');
});

test('batched mode: application/cloudevents-batch+json arrays of at most --batch-size', async (t) => {
  const sink = await new CeSink().start();
  t.after(() => sink.stop());
  const session = `b-${randomBytes(3).toString('hex')}`;
  const events = makeEvents('bat', session, 0, 14).filter((e) => e['session'] === session);
  const f = forwarder(sink.url, join(dir, 'batch.json'), session, ['--mode', 'batch']);
  t.after(() => stop(f));
  await postEvents(relay.url, TOKEN, events);
  await waitFor('all', () => sink.items.length >= events.length);
  assert.deepEqual(sink.problems, []);
  assert.ok(sink.requests.every((r) => r.contentType.startsWith('application/cloudevents-batch+json') && Array.isArray(r.body) && r.body.length <= 4));
  assertOnce(sink.items, events);
});

test('a sink that refuses the forwarder (403) stops it: exit 5, named cause, nothing dropped', async (t) => {
  const sink = await new CeSink().start();
  t.after(() => sink.stop());
  sink.mode = { kind: 'status', status: 403 };
  const session = `r-${randomBytes(3).toString('hex')}`;
  const f = forwarder(sink.url, join(dir, 'refused.json'), session);
  t.after(() => stop(f));
  await postEvents(
    relay.url,
    TOKEN,
    makeEvents('ref', session, 0, 3).filter((e) => e['session'] === session),
  );
  assert.equal(await f.exited, 5);
  assert.match(f.stderr(), /aep: AEP_BRIDGE_REFUSED: http:\/\/127\.0\.0\.1:\d+\/ answered HTTP 403 \(not retried: .*nothing was dropped\)/);
});

// ------------------------------------------------------------------------------- ce serve

const auth = { Authorization: `Bearer ${TOKEN}` };
const post = (body: string, headers: Record<string, string>, path = '/') => fetch(serveUrl + path, { method: 'POST', headers, body });
/** node:http, not fetch: fetch does not let a caller set Host (the DNS-rebinding probe needs it). */
const rawPost = (body: string, headers: Record<string, string>) =>
  new Promise<Response>((resolve, reject) => {
    const u = new URL(serveUrl);
    const req = request({ host: u.hostname, port: u.port, path: '/', method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0 })));
    });
    req.on('error', reject);
    req.end(body);
  });
const ceOf = (e: Record<string, unknown>) => {
  const r = encodeCloudEvent(e);
  assert.ok(r.ok);
  return r.value;
};

async function relayHolds(session: string): Promise<Record<string, unknown>[]> {
  const got: Record<string, unknown>[] = [];
  const sub = subscribe({ url: relay.url, token: TOKEN, filter: { session }, from: 'all', live: false }, (e) => {
    got.push(e as unknown as Record<string, unknown>);
  });
  await sub.done;
  return got;
}

test('ce serve: a structured CloudEvent and a batch are ingested into the relay, as the AEP events they carry', async () => {
  const session = `in-${randomBytes(3).toString('hex')}`;
  const events = makeEvents('in', session, 0, 6).filter((e) => e['session'] === session);
  const one = await post(JSON.stringify(ceOf(events[0]!)), { ...auth, 'Content-Type': 'application/cloudevents+json; charset=utf-8' });
  assert.equal(one.status, 202);
  assert.deepEqual(await one.json(), { accepted: 1 });
  const batch = await post(JSON.stringify(events.slice(1).map(ceOf)), { ...auth, 'Content-Type': 'application/cloudevents-batch+json' }, '/ce');
  assert.equal(batch.status, 202);
  assert.deepEqual(await batch.json(), { accepted: events.length - 1 });
  const held = await relayHolds(session);
  assert.deepEqual(
    held.map((e) => e['id']),
    events.map((e) => e['id']),
  );
  assert.deepEqual(held[1], events[1], 'the very event (full capture as sent: ingest is not a ceiling)');
});

test('ce serve: extensions kept, illegal and core-colliding names dropped with diagnostics, never overwriting a core attribute', async () => {
  const session = `dg-${randomBytes(3).toString('hex')}`;
  const e = makeEvents('dg', session, 1, 1)[0]!;
  const ce = { ...ceOf(e), acmeregion: 'eu1', aep_bad: 'x', session: 'evil', capture: 'full' };
  const r = await post(JSON.stringify(ce), { ...auth, 'Content-Type': 'application/cloudevents+json' });
  assert.equal(r.status, 202);
  const body = (await r.json()) as { accepted: number; diagnostics: { rule: string; attribute: string; index: number }[] };
  assert.equal(body.accepted, 1);
  assert.deepEqual(
    body.diagnostics.map((d) => [d.rule, d.attribute]),
    [
      ['ce.illegal-name', 'aep_bad'],
      ['ce.core-collision', 'session'],
      ['ce.core-collision', 'capture'],
    ],
  );
  const [held] = await relayHolds(session);
  assert.deepEqual(held, { ...e, acmeregion: 'eu1' });
});

test('ce serve: every refusal has a stable code; nothing of a bad batch is ingested', async () => {
  const session = `bad-${randomBytes(3).toString('hex')}`;
  const good = makeEvents('bad', session, 0, 3)
    .filter((e) => e['session'] === session)
    .map(ceOf);
  const cases: [Promise<Response>, number, string, RegExp?][] = [
    [
      post(JSON.stringify(good[0]), { ...auth, 'Content-Type': 'application/json', 'ce-specversion': '1.0', 'ce-id': 'x' }),
      415,
      'AEP_CE_UNSUPPORTED_MODE',
      /binary content mode/,
    ],
    [post(JSON.stringify(good[0]), { ...auth, 'Content-Type': 'text/plain' }), 415, 'AEP_CE_UNSUPPORTED_MODE'],
    [post('{not json', { ...auth, 'Content-Type': 'application/cloudevents+json' }), 400, 'AEP_CE_BAD_JSON'],
    [
      post(JSON.stringify({ ...good[0], specversion: '0.3' }), { ...auth, 'Content-Type': 'application/cloudevents+json' }),
      400,
      'AEP_CE_INVALID',
      /ce\.specversion/,
    ],
    [
      post(JSON.stringify({ specversion: '1.0', id: 'g', source: 'https://github.com/x', type: 'com.github.push' }), {
        ...auth,
        'Content-Type': 'application/cloudevents+json',
      }),
      400,
      'AEP_CE_OUT_OF_SCOPE',
    ],
    [
      post(JSON.stringify([good[0], { ...good[1], aepsequence: -1 }, good[2]]), { ...auth, 'Content-Type': 'application/cloudevents-batch+json' }),
      400,
      'AEP_CE_INVALID',
      /envelope\.seq/,
    ],
    [
      post(JSON.stringify(Array.from({ length: 6 }, () => good[0])), { ...auth, 'Content-Type': 'application/cloudevents-batch+json' }),
      413,
      'AEP_CE_TOO_LARGE',
    ],
    [
      post(JSON.stringify({ ...good[0], data: { big: 'x'.repeat(70_000) } }), { ...auth, 'Content-Type': 'application/cloudevents+json' }),
      413,
      'AEP_CE_TOO_LARGE',
    ],
    [post(JSON.stringify(good[0]), { 'Content-Type': 'application/cloudevents+json' }), 401, 'AEP_CE_RELAY_REFUSED'],
    [
      post(
        JSON.stringify(
          ceOf({
            aep: '0.1',
            id: 'cmd',
            type: 'control.cancel',
            subject: session,
            time: '2026-08-01T09:00:00Z',
            source: 'aep://x/agent/y',
            agent: 'y',
            session,
            data: { scope: 'session' },
          }),
        ),
        { ...auth, 'Content-Type': 'application/cloudevents+json' },
      ),
      403,
      'AEP_CE_RELAY_REFUSED',
      /HTTP 403/,
    ],
    [fetch(serveUrl + '/', { headers: auth }), 405, 'AEP_CE_METHOD'],
    [post('{}', { ...auth, 'Content-Type': 'application/cloudevents+json' }, '/other'), 404, 'AEP_CE_NOT_FOUND'],
    [rawPost(JSON.stringify(good[0]), { ...auth, 'Content-Type': 'application/cloudevents+json', Host: 'evil.example' }), 403, 'AEP_CE_FORBIDDEN_HOST'],
  ];
  for (const [p, status, code, detail] of cases) {
    const r = await p;
    const body = (await r.json()) as { error: string; detail: string };
    assert.equal(r.status, status, `${code}: ${JSON.stringify(body)}`);
    assert.equal(body.error, code);
    if (detail) assert.match(JSON.stringify(body), detail);
  }
  assert.deepEqual(await relayHolds(session), [], 'nothing ingested');
  assert.doesNotMatch(serve.stderr() + serve.stdout(), new RegExp(TOKEN), 'the token is never printed');
  const after = await post(JSON.stringify(good[0]), { ...auth, 'Content-Type': 'application/cloudevents+json' });
  assert.equal(after.status, 202, 'still serving');
});

test('ce serve: the relay down answers 502 AEP_CE_RELAY_UNAVAILABLE (retryable); a bad --port is a usage error', async (t) => {
  const s = start(['ce', 'serve', '--port', '0', '--relay', 'http://127.0.0.1:1']);
  t.after(() => stop(s));
  await waitFor('listening', () => /listening on (http:\/\/\S+)/.test(s.stdout()));
  const url = /listening on (http:\/\/\S+)/.exec(s.stdout())![1]!;
  const e = makeEvents('dn', 'dn', 1, 1)[0]!;
  const r = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/cloudevents+json' }, body: JSON.stringify(ceOf(e)) });
  assert.equal(r.status, 502);
  assert.equal(((await r.json()) as { error: string }).error, 'AEP_CE_RELAY_UNAVAILABLE');
  const bad = start(['ce', 'serve', '--port', '70000']);
  t.after(() => stop(bad));
  assert.equal(await bad.exited, 2);
  assert.match(bad.stderr(), /AEP_CLI_BAD_OPTION: --port must be 0-65535/);
});
