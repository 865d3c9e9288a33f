// Issue 17 "Must show": ntfy and webhook notifiers against local receivers started by the test, a
// real relay and a real agent. Content never above the ceiling (free text planted in prompts,
// labels and values never arrives), `attention.routed` emitted for every forward, action links
// single use and refused when forged, replayed, expired or after resolution; escalation to a
// second channel only for the request still pending.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandSender } from '@aep/client/node';
import type { RelayHandle } from '@aep/relay';
import { startNotifier } from '../src/index.js';
import type { Notifier, NotifyConfig, SendRecord } from '../src/index.js';
import { collect, Receiver, TestAgent, TOKEN, testRelay, until } from './support.js';

const PLANT = 'PLANTED-free-text';
let relay: RelayHandle;
let agent: TestAgent;
const closers: Array<() => Promise<void> | void> = [];

before(async () => {
  relay = await testRelay();
  agent = await TestAgent.start(relay.url);
});
after(async () => {
  for (const c of closers.reverse()) await c();
  await agent?.close();
  await relay?.close();
});

function ntfyConfig(
  server: string,
  capture: 'metadata' | 'redacted' = 'metadata',
  filter: Record<string, unknown> = { type: 'attention.requested' },
): NotifyConfig {
  return {
    channels: new Map([['phone', { name: 'phone', type: 'ntfy', capture, server, topic: 'aep-test' }]]),
    rules: [{ name: 'all', filter, channel: 'phone', afterMs: 0, maxRepeats: 0, escalate: [], quiet: true }],
    quiet: [],
    actions: { listen: '127.0.0.1:0', ttlMs: 60_000 },
    inboxUrl: 'https://laptop.example.test/',
  };
}

async function notifier(config: NotifyConfig, now?: () => number, sends?: SendRecord[]): Promise<Notifier> {
  const n = await startNotifier({ url: relay.url, token: TOKEN, config, ...(now ? { now } : {}), onSend: (s) => sends?.push(s), log: () => {} });
  closers.push(() => n.close());
  await n.ready;
  return n;
}

async function act(url: string, method = 'POST'): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method, headers: { 'X-AEP-Action': '1' } });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

function ntfyActions(r: { json: unknown }): Array<{ action: string; label: string; url: string; method: string }> {
  return ((r.json as Record<string, unknown>)['actions'] ?? []) as Array<{ action: string; label: string; url: string; method: string }>;
}

test('ntfy at the default metadata ceiling: structure only, attention.routed for each forward, Deny as the only one-tap answer', async () => {
  const ntfy = await new Receiver().start();
  closers.push(() => ntfy.close());
  const routed = collect(relay.url, { type: 'attention.routed', session: 's_meta' });
  closers.push(() => routed.close());
  let skew = 0;
  const n = await notifier(ntfyConfig(ntfy.url, 'metadata', { type: 'attention.requested', session: 's_meta' }), () => Date.now() + skew);

  const perm = agent.request(
    's_meta',
    {
      kind: 'permission',
      prompt: `echo "${PLANT}"\nrm -rf ~`,
      options: [
        { id: 'allow', label: `${PLANT} yes` },
        { id: 'deny', label: `${PLANT} no` },
      ],
    },
    { subject: 'Bash', approval: true },
  );
  const choice = agent.request('s_meta', {
    kind: 'review',
    prompt: `${PLANT} ship?`,
    options: [
      { id: 'ship', label: `${PLANT} ship it` },
      { id: 'no', label: `${PLANT} hold` },
    ],
  });
  const form = agent.request('s_meta', {
    kind: 'form',
    prompt: `${PLANT} configure`,
    fields: [
      { id: '1', type: 'string', label: `${PLANT} bucket`, required: true },
      { id: '2', type: 'select', label: `${PLANT} class`, other: true, choices: [{ id: '1', label: `${PLANT} cold` }] },
    ],
  });
  // A sender that lies about its level gains nothing: the composer never reads text below redacted.
  const liar = agent.request('s_meta', { kind: 'input', prompt: `${PLANT} typed by the agent` }, { capture: 'metadata', subject: `${PLANT} subject` });

  const byReq = async (id: string) => ntfy.wait((r) => JSON.stringify(r.json).includes(encodeURIComponent(id)), `ntfy message for ${id}`);
  const [mp, mc, mf, ml] = [await byReq(perm.id), await byReq(choice.id), await byReq(form.id), await byReq(liar.id)];
  for (const m of ntfy.got) {
    assert.ok(!m.text.includes('PLANTED'), `free text reached ntfy: ${m.text}`);
    assert.equal(m.method, 'POST');
    assert.equal(m.url, '/');
    assert.equal((m.json as Record<string, unknown>)['topic'], 'aep-test');
  }
  assert.equal((mp.json as Record<string, unknown>)['title'], 'claude-code asks permission: Bash');
  assert.equal((mf.json as Record<string, unknown>)['title'], 'claude-code asks 2 questions');
  assert.equal((ml.json as Record<string, unknown>)['title'], 'claude-code asks for input', 'a subject that is not an identifier is left out');
  assert.equal((mp.json as Record<string, unknown>)['click'], `https://laptop.example.test/#/r/s_meta/${perm.id}`, 'tapping opens the request in the inbox');
  assert.deepEqual(
    ntfyActions(mp).map((a) => [a.action, a.label, a.method]),
    [['http', 'Deny', 'POST']],
    'no Allow where the command cannot be read',
  );
  assert.deepEqual(
    ntfyActions(mc).map((a) => a.label),
    ['No'],
    'closed choices that cannot be read: refusals only',
  );
  assert.deepEqual(ntfyActions(mf), [], 'forms open the inbox');

  // attention.routed: foreign emitter, own agent/source, the request's session, no seq, subject = request id.
  for (const req of [perm, choice, form, liar]) {
    const r = await routed.wait((e) => e.subject === req.id, `attention.routed for ${req.id}`);
    assert.equal(r.agent, 'aep-notify');
    assert.equal(r.session, 's_meta');
    assert.equal(r.seq, undefined);
    assert.equal(r.cause, req.id);
    assert.deepEqual(r.data, { to: 'phone', via: 'ntfy' });
    assert.notEqual(r.source, perm.source);
  }

  // The Deny link answers through control.attention.respond, once.
  const deny = ntfyActions(mp)[0]!.url;
  assert.match(deny, /^http:\/\/127\.0\.0\.1:\d+\/a\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  const preview = await fetch(deny);
  assert.equal(preview.status, 200, 'a GET only shows what the link does');
  assert.match(await preview.text(), /<form method="post"/);
  assert.equal(agent.commands.length, 0, 'a GET never answers');
  const first = await act(deny);
  assert.equal(first.status, 200, JSON.stringify(first.json));
  assert.equal(first.json['status'], 'accepted');
  const cmd = agent.commands.find((c) => c.event.subject === perm.id)!;
  assert.equal(cmd.event.type, 'control.attention.respond');
  assert.equal(cmd.event.agent, 'aep-notify');
  assert.deepEqual(cmd.event.data, { answer: { option: 'deny' } });
  const replay = await act(deny);
  assert.equal(replay.status, 409);
  assert.equal(replay.json['error'], 'AEP_NOTIFY_LINK_USED');
  assert.equal(agent.commands.filter((c) => c.event.subject === perm.id).length, 1, 'a replayed link sends nothing');

  // Forged: a flipped character, and a Deny link rewritten to Allow with the old signature.
  const [payload, mac] = deny.split('/a/')[1]!.split('.') as [string, string];
  const flipped = `${deny.split('/a/')[0]}/a/${payload}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
  assert.equal((await act(flipped)).json['error'], 'AEP_NOTIFY_LINK_FORGED');
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  const allow = Buffer.from(JSON.stringify({ ...claims, a: { option: 'allow' }, n: 'fresh-nonce' })).toString('base64url');
  const forged = await act(`${deny.split('/a/')[0]}/a/${allow}.${mac}`);
  assert.equal(forged.status, 403);
  assert.equal(forged.json['error'], 'AEP_NOTIFY_LINK_FORGED');
  const selfSigned = createHmac('sha256', 'guessed-key').update(`aep-action-v1.${allow}`).digest('base64url');
  assert.equal((await act(`${deny.split('/a/')[0]}/a/${allow}.${selfSigned}`)).status, 403);

  // After resolution: the choice request is answered elsewhere (the inbox), then its link is refused.
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, agent: 'aep-inbox' });
  closers.push(() => sender.close());
  assert.equal((await sender.respond({ session: 's_meta', requestId: choice.id, answer: { option: 'ship' } })).status, 'accepted');
  await until(() => n.request('s_meta', choice.id)?.open === false, 'the notifier to see the resolution');
  const late = await act(ntfyActions(mc)[0]!.url);
  assert.equal(late.status, 409);
  assert.equal(late.json['error'], 'AEP_NOTIFY_LINK_RESOLVED');

  // Expired: a fresh request's link used after its lifetime (the notifier's clock moves on).
  const later = agent.request('s_meta', { kind: 'permission', prompt: 'ls', options: [{ id: 'deny', label: 'Deny' }] }, { subject: 'Bash', approval: true });
  const ml2 = await byReq(later.id);
  skew = 61_000;
  const expired = await act(ntfyActions(ml2)[0]!.url);
  assert.equal(expired.status, 410);
  assert.equal(expired.json['error'], 'AEP_NOTIFY_LINK_EXPIRED');
  assert.equal(agent.commands.filter((c) => c.event.subject === later.id).length, 0);
  skew = 0;
});

test('webhook at an opted-in redacted ceiling: signed body, the complete approval text, Allow with a proof the agent accepts', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-notify-'));
  const secret = 'webhook-secret-for-the-test-0123';
  writeFileSync(join(dir, 'secret'), secret + '\n', { mode: 0o600 });
  const hook = await new Receiver().start();
  closers.push(() => hook.close());
  await notifier({
    channels: new Map([
      ['hook', { name: 'hook', type: 'webhook', capture: 'redacted', url: `${hook.url}/hook`, secretFile: join(dir, 'secret'), format: 'json' }],
    ]),
    rules: [
      { name: 'approvals', filter: { type: 'attention.requested', session: 's_red' }, channel: 'hook', afterMs: 0, maxRepeats: 0, escalate: [], quiet: true },
    ],
    quiet: [],
    actions: { listen: '127.0.0.1:0', ttlMs: 60_000 },
  });
  const prompt = 'echo "cleaning build cache"\nrm -rf build/';
  const perm = agent.request(
    's_red',
    {
      kind: 'permission',
      prompt,
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    },
    { subject: 'Bash', approval: true, capture: 'redacted' },
  );
  // At redacted the §9.4 pipeline has run; a value it would rewrite (a home path) is not complete.
  const secretPrompt = `cat /home/alice/.ssh/id_rsa # ${PLANT}`;
  const withHome = agent.request(
    's_red',
    {
      kind: 'permission',
      prompt: secretPrompt,
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
    },
    { subject: 'Bash', approval: true, capture: 'full' },
  );
  const m = await hook.wait((r) => JSON.stringify(r.json).includes(perm.id), 'the webhook for the permission request');
  // Signature: t={unix},v1=HMAC-SHA256(secret, "{t}.{body}").
  const sig = String(m.headers['x-aep-signature']);
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig) ?? [];
  assert.ok(t && v1, sig);
  assert.equal(v1, createHmac('sha256', secret).update(`${t}.${m.text}`).digest('hex'));
  const aep = (m.json as Record<string, Record<string, unknown>>)['aep']!;
  assert.equal(aep['capture'], 'redacted');
  assert.deepEqual(aep['approval'], { text: prompt, complete: true });
  assert.ok(String((m.json as Record<string, unknown>)['text']).startsWith('claude-code asks permission: Bash'), 'Slack-compatible text');
  const actions = aep['actions'] as Array<{ label: string; effect: string; url: string; method: string }>;
  assert.deepEqual(
    actions.map((a) => [a.label, a.effect, a.method]),
    [
      ['Deny', 'deny', 'POST'],
      ['Allow', 'allow', 'POST'],
    ],
  );
  const ok = await act(actions[1]!.url);
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  const cmd = agent.commands.find((c) => c.event.subject === perm.id)!;
  assert.deepEqual(cmd.event.data, { answer: { option: 'allow' } });
  assert.match(String((cmd.event as Record<string, unknown>)['approvalproof']), /^[0-9a-f]{32}$/, 'the agent checked the proof and accepted');
  // The full-capture request reached the redacted channel down-levelled: structure only, no Allow.
  const mh = await hook.wait((r) => JSON.stringify(r.json).includes(withHome.id), 'the webhook for the full-capture request');
  assert.ok(!mh.text.includes(PLANT) && !mh.text.includes('id_rsa'), mh.text);
  const ah = (mh.json as Record<string, Record<string, unknown>>)['aep']!['actions'] as Array<{ effect: string }>;
  assert.deepEqual(
    ah.map((a) => a.effect),
    ['deny'],
  );
});

test('escalation: a request still pending reaches the second channel; the answered one does not; reminders repeat', async () => {
  const ntfy = await new Receiver().start();
  const dir = mkdtempSync(join(tmpdir(), 'aep-notify-'));
  writeFileSync(join(dir, 'secret'), 'another-secret-0123456789abcdef\n');
  const hook = await new Receiver().start();
  closers.push(
    () => ntfy.close(),
    () => hook.close(),
  );
  const sends: SendRecord[] = [];
  const n = await notifier(
    {
      channels: new Map<string, NotifyConfig['channels'] extends Map<string, infer C> ? C : never>([
        ['phone', { name: 'phone', type: 'ntfy', capture: 'metadata', server: ntfy.url, topic: 'aep-esc' }],
        ['oncall', { name: 'oncall', type: 'webhook', capture: 'metadata', url: hook.url, secretFile: join(dir, 'secret'), format: 'slack' }],
      ]),
      rules: [
        {
          name: 'esc',
          filter: { type: 'attention.requested', session: 's_esc' },
          channel: 'phone',
          afterMs: 0,
          repeatMs: 300,
          maxRepeats: 2,
          escalate: [{ afterMs: 1200, channel: 'oncall' }],
          quiet: true,
        },
      ],
      quiet: [],
      actions: { ttlMs: 60_000 },
    },
    undefined,
    sends,
  );
  const answered = agent.request('s_esc', { kind: 'input', prompt: 'x' });
  const pending = agent.request('s_esc', { kind: 'input', prompt: 'y' });
  await ntfy.wait((r) => r.text.includes(answered.id), 'the first notification');
  const sender = await CommandSender.connect({ url: relay.url, token: TOKEN, agent: 'aep-inbox' });
  closers.push(() => sender.close());
  assert.equal((await sender.respond({ session: 's_esc', requestId: answered.id, answer: { text: 'done' } })).status, 'accepted');
  await until(() => n.request('s_esc', answered.id)?.answered, 'the notifier to see the answer');
  const sentForAnswered = sends.filter((s) => s.request === answered.id).length;
  const esc = await hook.wait((r) => r.text.includes(pending.id), 'the escalation for the pending request');
  const blocks = (esc.json as Record<string, unknown>)['blocks'] as Array<Record<string, unknown>>;
  assert.match(JSON.stringify(blocks[0]), /Nobody answered: claude-code asks for input/);
  assert.ok(!hook.got.some((r) => r.text.includes(answered.id)), 'the answered request never escalates');
  await until(() => sends.filter((s) => s.request === pending.id && s.channel === 'phone').length >= 3, 'two reminders');
  const reminders = sends.filter((s) => s.request === pending.id && s.channel === 'phone');
  assert.deepEqual(
    reminders.map((s) => s.reason),
    ['first', 'reminder', 'reminder'],
  );
  assert.ok(
    ntfy.got.filter((r) => r.text.includes(pending.id)).some((r) => String((r.json as Record<string, unknown>)['title']).startsWith('Still waiting: ')),
  );
  assert.equal(sends.filter((s) => s.request === answered.id).length, sentForAnswered, 'nothing more is sent once answered');
  agent.dismiss('s_esc', pending.id);
});

test('links die with the notifier: after a restart on the same address, an old link is refused as forged and sends nothing', async () => {
  const ntfy = await new Receiver().start();
  closers.push(() => ntfy.close());
  const config = ntfyConfig(ntfy.url, 'metadata', { type: 'attention.requested', session: 's_restart' });
  const first = await startNotifier({ url: relay.url, token: TOKEN, config, log: () => {} });
  await first.ready;
  const req = agent.request('s_restart', { kind: 'permission', prompt: 'ls', options: [{ id: 'deny', label: 'Deny' }] }, { subject: 'Bash', approval: true });
  const m = await ntfy.wait((r) => r.text.includes(req.id), 'the first notification');
  const link = ntfyActions(m)[0]!.url;
  const port = new URL(link).port;
  const routed = collect(relay.url, { type: 'attention.routed', session: 's_restart' });
  closers.push(() => routed.close());
  await routed.wait((e) => e.subject === req.id, "the first notifier's attention.routed");
  await first.close();
  const second = await notifier({ ...config, actions: { ...config.actions, listen: `127.0.0.1:${port}` } });
  assert.equal(second.actionsUrl, `http://127.0.0.1:${port}`);
  const res = await act(link);
  assert.equal(res.status, 403);
  assert.equal(res.json['error'], 'AEP_NOTIFY_LINK_FORGED');
  assert.equal(agent.commands.filter((c) => c.event.subject === req.id).length, 0);
  // The restarted notifier read its own attention.routed and did not notify the same request again.
  await until(() => second.request('s_restart', req.id), 'the second notifier to see the request');
  assert.equal(second.request('s_restart', req.id)!.sends, 0);
  agent.dismiss('s_restart', req.id);
});
