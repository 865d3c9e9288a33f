// `aep mcp wrap` end to end with the real MCP SDK, a real relay and `aep respond`: an SDK server
// whose tool calls elicitInput, an SDK Client as host (with and without elicitation), answers
// through the relay. Proves: typed content reaches the tool; decline, cancel and expiry reach
// the server; invalid answers are nacked and the request stays pending; a host answer that wins
// withdraws the AEP request (and an AEP answer that wins withdraws the host dialog).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { elicitationToForm, validateEvent, validateStream } from '@aep/protocol';
import { runAep, startRelayProcess } from '../../../test/support/cli.js';
import { startHost, SessionWatch, lifecycle } from './support.js';
import type { Host } from './support.js';
import { ALL_SHAPES, PLANTED_KEY } from './fixtures/schemas.mjs';

const TOKEN = `t-${randomBytes(8).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
});
after(async () => {
  await relay.stop();
});

function wrapArgs(session: string, extra: string[] = []): string[] {
  return ['--relay', relay.url, '--token', TOKEN, '--session', session, '--agent', 'bridge-test', ...extra];
}

async function respond(requestId: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runAep(['respond', requestId, ...args, '--relay', relay.url, '--token', TOKEN], undefined, { timeoutMs: 30_000 });
}

async function withHost<T>(host: Host, watch: SessionWatch, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    watch.close();
    await host.close();
  }
}

const isRequest = (e: { type: string }) => e.type === 'attention.requested';

test('form answered through the relay: the tool receives typed content; an invalid answer is nacked first', async () => {
  const session = `s-typed-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session));
  await withHost(host, watch, async () => {
    const pending = host.ask('all');
    const req = await watch.wait(isRequest, 'attention.requested');
    const data = req.data as { kind: string; prompt: string; fields: { id: string; type: string; label: string; required: boolean }[]; respond_via: string[] };
    // The Annex A pin member for member (AEP-0002 Annex A): no options, no expires_at.
    assert.deepEqual(Object.keys(data).sort(), ['fields', 'kind', 'prompt', 'respond_via']);
    assert.deepEqual(data, (elicitationToForm(ALL_SHAPES, { agent: 'bridge-test', capture: 'redacted' }) as { data: unknown }).data);
    assert.equal(data.kind, 'form');
    assert.equal(data.prompt, 'Configure the nightly backup');
    assert.deepEqual(
      data.fields.map((f) => [f.id, f.type, f.required]),
      [
        ['bucket', 'string', true],
        ['retention', 'number', true],
        ['ratio', 'number', false],
        ['encrypt', 'boolean', true],
        ['tier', 'select', false],
        ['days', 'select', false],
        ['region', 'select', false],
      ],
    );
    assert.deepEqual(data.respond_via, ['control']);
    assert.equal(req.capture, 'redacted');
    assert.equal(req.subject, 'mcp:bridge-test-server');

    // 3.5 is a number (the AEP form accepts it) but not an integer (the MCP schema does not).
    const bad = await respond(req.id, ['--values', JSON.stringify({ bucket: 'nightly', retention: 3.5, encrypt: true })]);
    assert.equal(bad.code, 3, `rejected: ${bad.stdout}${bad.stderr}`);
    assert.match(bad.stdout + bad.stderr, /invalid/);
    // A missing required field (AEP-0006 §4 rule 1).
    const missing = await respond(req.id, ['--values', JSON.stringify({ bucket: 'nightly', retention: 30 })]);
    assert.equal(missing.code, 3, `rejected: ${missing.stdout}${missing.stderr}`);
    assert.deepEqual(lifecycle(watch.events, req.id), ['attention.requested'], 'the request stays pending after nacks');

    const ok = await respond(req.id, [
      '--values',
      JSON.stringify({ bucket: 'nightly', retention: 30, ratio: 1.5, encrypt: false, tier: 'arc', days: ['mon', 'fri'] }),
    ]);
    assert.equal(ok.code, 0, `accepted: ${ok.stdout}${ok.stderr}`);
    const result = await pending;
    assert.equal(result.action, 'accept');
    assert.deepEqual(result.content, { bucket: 'nightly', retention: 30, ratio: 1.5, encrypt: false, tier: 'arc', days: ['mon', 'fri'] });
    assert.deepEqual(result.types, { bucket: 'string', retention: 'integer', ratio: 'number', encrypt: 'boolean', tier: 'string', days: 'array' });
    await watch.wait((e) => e.type === 'attention.resolved' && e.subject === req.id, 'attention.resolved');
    assert.deepEqual(lifecycle(watch.events, req.id), ['attention.requested', 'attention.answered', 'attention.resolved']);
    const answered = watch.events.find((e) => e.type === 'attention.answered' && e.subject === req.id);
    assert.equal((answered?.data as { via: string }).via, 'control');
    assert.equal((watch.events.find((e) => e.type === 'attention.resolved' && e.subject === req.id)?.data as { resolution: string }).resolution, 'answered');
    // Capture honesty (AEP-0006 §5.2): at `redacted` the string answer is kept (through the pipeline).
    assert.deepEqual((answered?.data as { answer: { values: Record<string, unknown> } }).answer.values, {
      bucket: 'nightly',
      retention: 30,
      ratio: 1.5,
      encrypt: false,
      tier: 'arc',
      days: ['mon', 'fri'],
    });
    // Every event the bridge emitted is schema-valid (envelope + payload).
    for (const e of watch.events.filter((x) => x.agent === 'bridge-test')) assert.deepEqual(validateEvent(e), [], `${e.type}: ${JSON.stringify(e)}`);
    // The recorded session (requests, nacked and accepted commands, acks, outcomes) is a valid stream.
    assert.deepEqual(validateStream(watch.events), []);
  });
});

test('capture metadata: structural prompt and labels on the bus, free text never recorded, the tool still gets it', async () => {
  const session = `s-meta-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session, ['--capture', 'metadata']));
  await withHost(host, watch, async () => {
    const pending = host.ask('all');
    const req = await watch.wait(isRequest, 'attention.requested');
    const data = req.data as { prompt: string; fields: { id: string; label: string; choices?: { id: string; label: string }[] }[] };
    assert.deepEqual(data, (elicitationToForm(ALL_SHAPES, { agent: 'bridge-test', capture: 'metadata' }) as { data: unknown }).data);
    assert.equal(data.prompt, 'bridge-test requests input (7 fields)');
    for (const f of data.fields) {
      assert.equal(f.label, f.id);
      for (const c of f.choices ?? []) assert.equal(c.label, c.id);
    }
    assert.doesNotMatch(JSON.stringify(req), /Configure|Bucket|Retention|Standard|Europe/);
    assert.equal(req.capture ?? 'metadata', 'metadata');
    assert.equal((await respond(req.id, ['--values', JSON.stringify({ bucket: 'secret-bucket-name', retention: 5, encrypt: true, region: 'eu' })])).code, 0);
    assert.deepEqual((await pending).content, { bucket: 'secret-bucket-name', retention: 5, encrypt: true, region: 'eu' });
    const answered = await watch.wait((e) => e.type === 'attention.answered' && e.subject === req.id, 'answered');
    // AEP-0006 §5.2: the string entry is dropped at metadata; number, boolean and choice ids stay.
    assert.deepEqual((answered.data as { answer: { values: unknown } }).answer.values, { retention: 5, encrypt: true, region: 'eu' });
    assert.doesNotMatch(JSON.stringify(watch.events.filter((e) => e.agent === 'bridge-test')), /secret-bucket-name/);
  });
});

test('decline and cancel (contract C2: accepted on the form without being listed) reach the server', async () => {
  const session = `s-decline-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session));
  await withHost(host, watch, async () => {
    const seen = new Set<string>();
    const next = async (what: string) => {
      const r = await watch.wait((e) => isRequest(e) && !seen.has(e.id), what);
      seen.add(r.id);
      assert.equal((r.data as { options?: unknown }).options, undefined, 'decline/cancel are not listed in data');
      return r;
    };
    const first = host.ask('all');
    const r1 = await next('first request');
    assert.equal((await respond(r1.id, ['--option', 'decline'])).code, 0);
    assert.deepEqual(await first, { action: 'decline', content: null, types: {} });

    const second = host.ask('all');
    const r2 = await next('second request');
    assert.equal((await respond(r2.id, ['--option', 'cancel'])).code, 0);
    assert.deepEqual(await second, { action: 'cancel', content: null, types: {} });

    const third = host.ask('all');
    const r3 = await next('third request');
    // AEP-0008 §1: text naming an option (case-insensitive) chooses it.
    assert.equal((await respond(r3.id, ['--text', '  CANCEL '])).code, 0);
    assert.deepEqual(await third, { action: 'cancel', content: null, types: {} });

    // Any other option is not an answer to a form.
    const fourth = host.ask('all');
    const r4 = await next('fourth request');
    const other = await respond(r4.id, ['--option', 'accept']);
    assert.equal(other.code, 3, other.stdout + other.stderr);
    assert.equal((await respond(r4.id, ['--option', 'decline'])).code, 0);
    assert.equal((await fourth).action, 'decline');

    for (const r of [r1, r2, r3]) await watch.wait((e) => e.type === 'attention.resolved' && e.subject === r.id, 'resolved');
    const recorded = (id: string) =>
      (watch.events.find((e) => e.type === 'attention.answered' && e.subject === id)?.data as { answer: unknown } | undefined)?.answer;
    assert.deepEqual(recorded(r1.id), { option: 'decline' });
    // Recorded as the engine records an option answer today (answered{option:"cancel"}); when the
    // engine records a person's cancel as resolved{dismissed} (decisions.md "Declining a form"),
    // the bridge maps that to the same MCP cancel.
    for (const r of [r2, r3]) {
      const answer = recorded(r.id);
      const resolution = (watch.events.find((e) => e.type === 'attention.resolved' && e.subject === r.id)?.data as { resolution: string }).resolution;
      assert.ok(
        (resolution === 'answered' && JSON.stringify(answer) === '{"option":"cancel"}') || (resolution === 'dismissed' && answer === undefined),
        `${resolution} ${JSON.stringify(answer)}`,
      );
    }
    // A form closed by an option answer (no values) is still a valid stream (AEP-0006 rules apply to values).
    assert.deepEqual(validateStream(watch.events), []);
  });
});

test('expiry: no answer within --timeout-ms gives cancel and attention.timeout', async () => {
  const session = `s-expiry-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session, ['--timeout-ms', '1500']));
  await withHost(host, watch, async () => {
    const result = await host.ask('all');
    assert.equal(result.action, 'cancel');
    const req = await watch.wait(isRequest, 'request');
    await watch.wait((e) => e.type === 'attention.timeout' && e.subject === req.id, 'attention.timeout');
    assert.deepEqual(lifecycle(watch.events, req.id), ['attention.requested', 'attention.timeout']);
    const late = await respond(req.id, ['--option', 'decline']);
    assert.equal(late.code, 3, 'an answer after expiry is refused');
  });
});

test('host with elicitation answers first: its answer reaches the tool and the AEP request is dismissed', async () => {
  const session = `s-hostwins-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session), {
    elicit: async () => {
      await watch.wait(isRequest, 'the AEP request, raised alongside the host dialog');
      return { action: 'accept', content: { bucket: 'from-host', retention: 7, encrypt: true } };
    },
  });
  await withHost(host, watch, async () => {
    const result = await host.ask('all');
    assert.deepEqual(result.content, { bucket: 'from-host', retention: 7, encrypt: true });
    const req = await watch.wait(isRequest, 'request');
    const resolved = await watch.wait((e) => e.type === 'attention.resolved' && e.subject === req.id, 'dismissal');
    assert.equal((resolved.data as { resolution: string }).resolution, 'dismissed');
    assert.deepEqual(lifecycle(watch.events, req.id), ['attention.requested', 'attention.resolved']);
    const late = await respond(req.id, ['--option', 'decline']);
    assert.equal(late.code, 3, 'the withdrawn request refuses answers');
    assert.deepEqual(validateStream(watch.events), []);
  });
});

test('AEP answers first: the host dialog is withdrawn with notifications/cancelled', async () => {
  const session = `s-aepwins-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  let hostAborted: (v: string) => void;
  const aborted = new Promise<string>((r) => {
    hostAborted = r;
  });
  const host = await startHost(wrapArgs(session), {
    elicit: (_req, { signal }) =>
      new Promise((_resolve, reject) => {
        // A human who never answers in the host; the bridge must withdraw this dialog.
        signal.addEventListener(
          'abort',
          () => {
            hostAborted(String(signal.reason));
            reject(new Error('withdrawn'));
          },
          { once: true },
        );
      }),
  });
  await withHost(host, watch, async () => {
    const pending = host.ask('all');
    const req = await watch.wait(isRequest, 'request');
    assert.equal((await respond(req.id, ['--values', JSON.stringify({ bucket: 'via-aep', retention: 2, encrypt: true })])).code, 0);
    const result = await Promise.race([
      pending,
      new Promise<never>((_r, rej) => setTimeout(() => rej(new Error(`no tool result; bridge stderr:\n${host.stderr()}`)), 20_000)),
    ]);
    assert.deepEqual(result.content, { bucket: 'via-aep', retention: 2, encrypt: true });
    assert.match(await aborted, /answered through AEP/);
  });
});

test('unsupported schema: declined when the host has no elicitation, asked in the host when it has', async () => {
  const session = `s-unsup-${randomBytes(3).toString('hex')}`;
  const plain = await startHost(wrapArgs(session));
  try {
    assert.equal((await plain.ask('unsupported')).action, 'decline');
    assert.match(plain.stderr(), /pattern/, 'the reason is logged on stderr');
  } finally {
    await plain.close();
  }

  const withEl = await startHost(wrapArgs(`${session}-2`), {
    elicit: async (req) => {
      assert.equal(req.params.message, 'Zip code please');
      return { action: 'accept', content: { zip: '12345' } };
    },
  });
  try {
    assert.deepEqual(await withEl.ask('unsupported'), { action: 'accept', content: { zip: '12345' }, types: { zip: 'string' } });
  } finally {
    await withEl.close();
  }
});

test('URL mode: surfaced as a kind "auth" request; accept through AEP reaches the server', async () => {
  const session = `s-url-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session));
  await withHost(host, watch, async () => {
    const pending = host.ask('url');
    const req = await watch.wait(isRequest, 'request');
    const data = req.data as { kind: string; prompt: string; options: { id: string }[] };
    assert.equal(data.kind, 'auth');
    assert.match(data.prompt, /Sign in to continue/);
    assert.match(data.prompt, /https:\/\/example\.com\/login/);
    assert.deepEqual(
      data.options.map((o) => o.id),
      ['accept', 'decline', 'cancel'],
    );
    assert.equal((await respond(req.id, ['--option', 'accept'])).code, 0);
    assert.deepEqual(await pending, { action: 'accept', content: null, types: {} });
  });
});

test('relay unreachable: a host without elicitation gets a decline, never a hang', async () => {
  const host = await startHost(['--relay', 'http://127.0.0.1:9', '--token', TOKEN, '--connect-timeout-ms', '300']);
  try {
    assert.equal((await host.ask('all')).action, 'decline');
    assert.match(host.stderr(), /unreachable/);
  } finally {
    await host.close();
  }
});

test('the host quits mid-question: the AEP request is dismissed before session.ended', async () => {
  const session = `s-quit-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  try {
    const host = await startHost(wrapArgs(session));
    const pending = host.ask('all').catch(() => undefined); // the call dies with the connection
    const req = await watch.wait(isRequest, 'request');
    await host.close();
    await pending;
    const ended = await watch.wait((e) => e.type === 'session.ended', 'session.ended');
    const resolved = await watch.wait((e) => e.type === 'attention.resolved' && e.subject === req.id, 'dismissal');
    assert.equal((resolved.data as { resolution: string }).resolution, 'dismissed');
    assert.ok((resolved.seq ?? 0) < (ended.seq ?? 0), 'AEP-0002 §7.2: the terminal precedes session.ended');
    assert.deepEqual(validateStream(watch.events), []);
  } finally {
    watch.close();
  }
});

test('redaction before claiming redacted (issue 12): an API key in the message, a title and an enum name never reaches the relay', async () => {
  for (const capture of ['redacted', 'full'] as const) {
    const session = `s-secret-${capture}-${randomBytes(3).toString('hex')}`;
    const watch = new SessionWatch(relay.url, TOKEN, session);
    await watch.ready();
    const host = await startHost(wrapArgs(session, ['--capture', capture]));
    await withHost(host, watch, async () => {
      const pending = host.ask('secret');
      const req = await watch.wait(isRequest, 'request');
      assert.equal(req.capture, capture);
      const data = req.data as { prompt: string; fields: { id: string; label: string; choices?: { label: string }[] }[] };
      const labels = [data.prompt, ...data.fields.flatMap((f) => [f.label, ...(f.choices ?? []).map((c) => c.label)])];
      if (capture === 'redacted') {
        // AEP-0003 §9.4 on the prompt and every label; the text around the key stays readable.
        assert.match(data.prompt, /^Deploy with key \[REDACTED:[a-z]+\]\? Confirm below\.$/);
        assert.match(data.fields[0]?.label ?? '', /^Use \[REDACTED:[a-z]+\] for this run\?$/);
        assert.match(data.fields[1]?.choices?.[0]?.label ?? '', /^prod \(key \[REDACTED:[a-z]+\]\)$/);
      } else {
        // `full` is the level that carries text verbatim: the key is there (the pipeline is what made the difference).
        assert.ok(labels.some((l) => l.includes(PLANTED_KEY)));
      }
      // A person types the key into a free-text field: the server gets it (it asked), the relay's
      // record at `redacted` does not.
      const typed = `here: ${PLANTED_KEY}`;
      assert.equal((await respond(req.id, ['--values', JSON.stringify({ confirm: true, target: 'stage', note: typed })])).code, 0);
      assert.deepEqual((await pending).content, { confirm: true, target: 'stage', note: typed });
      const answered = await watch.wait((e) => e.type === 'attention.answered' && e.subject === req.id, 'answered');
      const note = (answered.data as { answer: { values: { note: string } } }).answer.values.note;
      if (capture === 'redacted') assert.match(note, /^here: \[REDACTED:[a-z]+\]$/);
      else assert.equal(note, typed);
      if (capture === 'redacted') {
        await watch.wait((e) => e.type === 'attention.resolved' && e.subject === req.id, 'resolved');
        // Our events and acks: no trace of the key (the command itself is the sender's, at its own level).
        const ours = watch.events.filter((e) => e.agent === 'bridge-test');
        assert.doesNotMatch(JSON.stringify(ours), new RegExp(PLANTED_KEY.slice(0, 12)), 'no trace of the key in anything the bridge emitted');
      }
    });
  }
});
