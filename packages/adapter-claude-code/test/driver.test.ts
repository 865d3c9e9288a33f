// A driver that behaves like Claude Code: it POSTs realistic hook sequences for two concurrent
// sessions (one with a subagent) to the real daemon (`aep claude-code serve`, a subprocess) and
// holds the blocking HTTP requests open like Claude Code does, against a real relay
// (`aep relay --memory --token T`); answers come from `aep respond` (issue 6 "Must show").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { readFileSync } from 'node:fs';
import { validateStream } from '@aep/protocol';
import { subscribe } from '@aep/client/node';
import type { Subscription, WireEvent } from '@aep/client';
import { runAep, startRelayProcess } from '../../../test/support/cli.js';
import type { DaemonProcess } from './support/daemon.js';
import { hook, logged, startDaemonProcess, stopProcess, waitConnected } from './support/daemon.js';

const TOKEN = 'driver-test-token-4f1a9c';
const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`./fixtures/hooks/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

let relay: { url: string; child: ChildProcess; stop: () => Promise<void> };
let sub: Subscription;
const events: WireEvent[] = [];
const daemons: ChildProcess[] = [];

async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; saw ${events.map((e) => `${e.session}:${e.type}`).join(', ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const newRequest = (session: string, seen: Set<string>) => () =>
  events.find((e) => e.type === 'attention.requested' && e.session === session && !seen.has(e.id));

function respond(id: string, args: string[]) {
  return runAep(['respond', id, '--relay', relay.url, '--token', TOKEN, '--ack-window', '5000', ...args], undefined, { timeoutMs: 30_000 });
}

const base = (sid: string) => ({
  session_id: sid,
  transcript_path: `/home/dev/.claude/projects/x/${sid}.jsonl`,
  cwd: '/home/dev/shop',
  permission_mode: 'default',
});
const A = 'a1b2c3d4-0000-4000-8000-00000000000a';
const B = 'a1b2c3d4-0000-4000-8000-00000000000b';
let daemon: DaemonProcess;

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  sub = subscribe({ url: relay.url, token: TOKEN, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  daemon = await startDaemonProcess(['--relay', relay.url, '--token', TOKEN, '--wait-ms', '20000']);
  daemons.push(daemon.child);
  // Wait until the daemon's relay connection is up (its /health reports it).
  await waitConnected(daemon);
});

after(async () => {
  sub?.close();
  for (const d of daemons) await stopProcess(d);
  await relay?.stop();
});

test('two concurrent sessions with a subagent: lifecycle events, a held form answered with aep respond, a nacked then corrected answer', async () => {
  // Session A: start, prompt, subagent with a tool call, then AskUserQuestion (held open).
  for (const [ev, p] of [
    ['SessionStart', { ...base(A), hook_event_name: 'SessionStart', source: 'startup' }],
    ['UserPromptSubmit', { ...base(A), hook_event_name: 'UserPromptSubmit', prompt: 'Build the checkout page' }],
    ['SubagentStart', { ...base(A), hook_event_name: 'SubagentStart', agent_id: 'agent-77', agent_type: 'Explore' }],
    [
      'PreToolUse',
      {
        ...base(A),
        hook_event_name: 'PreToolUse',
        agent_id: 'agent-77',
        agent_type: 'Explore',
        tool_name: 'Grep',
        tool_input: { pattern: 'cart' },
        tool_use_id: 'toolu_sub1',
      },
    ],
    [
      'PostToolUse',
      {
        ...base(A),
        hook_event_name: 'PostToolUse',
        agent_id: 'agent-77',
        agent_type: 'Explore',
        tool_name: 'Grep',
        tool_input: { pattern: 'cart' },
        tool_response: { matches: 3 },
        tool_use_id: 'toolu_sub1',
      },
    ],
    ['SubagentStop', { ...base(A), hook_event_name: 'SubagentStop', agent_id: 'agent-77', agent_type: 'Explore', stop_hook_active: false }],
    ['SessionStart', { ...base(B), hook_event_name: 'SessionStart', source: 'startup' }],
    ['UserPromptSubmit', { ...base(B), hook_event_name: 'UserPromptSubmit', prompt: 'Deploy it' }],
  ] as const) {
    const r = await hook(daemon, ev, p);
    assert.equal(r.status, 200, `${ev}: ${JSON.stringify(r.body)}`);
    assert.deepEqual(r.body, {}, `${ev} gives no decision`);
  }
  const ask = fixture('AskUserQuestion');
  const askInput = ask['tool_input'] as { questions: unknown[] };
  const seenA = new Set<string>();
  const heldAsk = hook(
    daemon,
    'PreToolUse',
    { ...base(A), hook_event_name: 'PreToolUse', tool_name: 'AskUserQuestion', tool_input: askInput, tool_use_id: 'toolu_ask1' },
    60_000,
  );
  // Session B concurrently: a permission prompt, held open too.
  const seenB = new Set<string>();
  const heldPerm = hook(
    daemon,
    'PermissionRequest',
    { ...base(B), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'kubectl apply -f prod.yaml' } },
    60_000,
  );

  const formReq = await waitFor(newRequest(A, seenA), 'the AskUserQuestion form request');
  seenA.add(formReq.id);
  assert.equal((formReq.data as Record<string, unknown>)['kind'], 'form');
  assert.equal(formReq.capture, 'redacted', 'default: attention.* at redacted (AEP-0003 §9.1)');
  const permReq = await waitFor(newRequest(B, seenB), 'the permission request');
  seenB.add(permReq.id);
  assert.equal((permReq.data as Record<string, unknown>)['kind'], 'permission');

  // A missing required answer (question 2) is nacked invalid and the request stays pending.
  const bad = await respond(formReq.id, ['--values', '{"1":"2"}']);
  assert.equal(bad.code, 3, `nacked: ${bad.stdout} ${bad.stderr}`);
  assert.match(bad.stdout + bad.stderr, /invalid/);
  const race = await Promise.race([heldAsk.then(() => 'answered'), new Promise((r) => setTimeout(() => r('pending'), 300))]);
  assert.equal(race, 'pending', 'the hook is still held after the nack');
  const good = await respond(formReq.id, ['--values', '{"1":"2","2":["1","Klarna"]}']);
  assert.equal(good.code, 0, `accepted: ${good.stdout} ${good.stderr}`);
  const askReply = await heldAsk;
  assert.equal(askReply.status, 200);
  assert.deepEqual(askReply.body, {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'allow',
      updatedInput: {
        questions: askInput.questions,
        answers: { 'Which framework should the checkout page use?': 'Vue', 'Which payment providers do we support?': 'Stripe, Klarna' },
      },
    },
  });
  const answered = await waitFor(() => events.find((e) => e.type === 'attention.answered' && e.subject === formReq.id), 'attention.answered');
  assert.equal((answered.data as Record<string, unknown>)['via'], 'control');
  await waitFor(
    () => events.find((e) => e.type === 'attention.resolved' && e.subject === formReq.id && (e.data as Record<string, unknown>)['resolution'] === 'answered'),
    'attention.resolved',
  );
  assert.ok(
    events.some((e) => e.type === 'control.rejected' && e.session === A),
    'the nack is on the record',
  );

  // The permission in B answered deny with a reason reaches Claude as deny with that message.
  const deny = await respond(permReq.id, ['--option', 'deny', '--text', 'not on a Friday']);
  assert.equal(deny.code, 0, deny.stderr);
  const permReply = await heldPerm;
  assert.deepEqual(permReply.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not on a Friday', interrupt: false } },
  });

  // Subagent: its own child session with lineage, and delegation events in A.
  const child = events.find((e) => e.type === 'session.started' && (e.data as Record<string, unknown> | undefined)?.['parent']);
  assert.ok(child, 'child session.started with parent lineage');
  assert.deepEqual(((child.data as Record<string, unknown>)['parent'] as Record<string, unknown>)['session'], A);
  assert.ok(events.some((e) => e.type === 'delegation.subagent.started' && e.session === A));
  assert.ok(events.some((e) => e.type === 'delegation.subagent.stopped' && e.session === A));
  assert.ok(events.some((e) => e.type === 'tool.requested' && e.session === child.session));
});

test('an MCP elicitation round trip restores types (integers, arrays, booleans)', async () => {
  const seen = new Set(events.filter((e) => e.type === 'attention.requested').map((e) => e.id));
  const p = fixture('Elicitation');
  const held = hook(daemon, 'Elicitation', { ...p, ...base(B) }, 60_000);
  const req = await waitFor(newRequest(B, seen), 'the elicitation form');
  const r = await respond(req.id, ['--values', JSON.stringify({ env: 'prod', replicas: 4, ratio: 0.5, features: ['cdn'], notify: true })]);
  assert.equal(r.code, 0, r.stderr);
  const reply = await held;
  assert.deepEqual(reply.body, {
    hookSpecificOutput: {
      hookEventName: 'Elicitation',
      action: 'accept',
      content: { env: 'prod', region: 'eu', replicas: 4, ratio: 0.5, features: ['cdn'], notify: true },
    },
  });
  const content = (reply.body as Record<string, Record<string, Record<string, unknown>>>)['hookSpecificOutput']!['content']!;
  assert.ok(Number.isInteger(content['replicas']));
  const declineHeld = hook(daemon, 'Elicitation', { ...p, ...base(B) }, 60_000);
  seen.add(req.id);
  const req2 = await waitFor(newRequest(B, seen), 'the second elicitation');
  assert.equal((await respond(req2.id, ['--option', 'decline'])).code, 0);
  assert.deepEqual((await declineHeld).body, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' } });
});

test('a question answered elsewhere is dismissed; malformed input is refused with a code and the daemon keeps serving', async () => {
  const seen = new Set(events.filter((e) => e.type === 'attention.requested').map((e) => e.id));
  const input = { command: 'npm publish' };
  const held = hook(daemon, 'PermissionRequest', { ...base(A), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: input }, 60_000);
  const req = await waitFor(newRequest(A, seen), 'the permission request');
  // The user answered in the terminal: the tool ran, PostToolUse arrives for the same call.
  const post = await hook(daemon, 'PostToolUse', {
    ...base(A),
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_input: input,
    tool_response: { stdout: 'ok' },
    tool_use_id: 'toolu_pub',
  });
  assert.deepEqual(post.body, {});
  assert.deepEqual((await held).body, {}, 'the held hook gets no decision');
  await waitFor(
    () => events.find((e) => e.type === 'attention.resolved' && e.subject === req.id && (e.data as Record<string, unknown>)['resolution'] === 'dismissed'),
    'dismissed',
  );
  // (deny: allowing from the CLI also needs --digest, and the point here is the late answer)
  const late = await respond(req.id, ['--option', 'deny']);
  assert.equal(late.code, 3, `a late answer is refused: ${late.stdout}${late.stderr}`);

  for (const body of [
    '{not json',
    '[]',
    '{"hook_event_name":"Stop"}',
    JSON.stringify({ hook_event_name: 'PreToolUse', session_id: 'x', tool_name: 'AskUserQuestion', tool_input: { questions: 'nope' } }),
  ]) {
    const res = await fetch(`${daemon.url}/hook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.secret}` },
      body,
    });
    assert.equal(res.status, 400, body);
    const j = (await res.json()) as { error: string; message: string };
    assert.equal(j.error, 'AEP_CC_HOOK_INVALID');
    assert.ok(j.message.length > 0);
  }
  await logged(daemon, /AEP_CC_HOOK_INVALID/);
  const ok = await hook(daemon, 'Stop', { ...base(A), hook_event_name: 'Stop', stop_hook_active: false });
  assert.equal(ok.status, 200);
});

test('the wait timeout returns no decision within budget and records attention.timeout', async () => {
  const short = await startDaemonProcess(['--relay', relay.url, '--token', TOKEN, '--wait-ms', '1500', '--agent', 'cc-timeout']);
  daemons.push(short.child);
  await waitConnected(short);
  const sid = 'timeout-session-1';
  const r = await hook(short, 'PreToolUse', {
    ...base(sid),
    hook_event_name: 'PreToolUse',
    tool_name: 'AskUserQuestion',
    tool_input: fixture('AskUserQuestion')['tool_input'],
    tool_use_id: 'toolu_to',
  });
  assert.deepEqual(r.body, {}, 'no decision: Claude Code shows its own dialog');
  // Bounds far from the budgets, not timings: after the 1.5 s wait, long before the 20 s one.
  assert.ok(r.ms >= 1400 && r.ms < 15_000, `returned after the wait, well within a hook timeout (${r.ms} ms)`);
  const req = await waitFor(() => events.find((e) => e.type === 'attention.requested' && e.session === sid), 'request');
  const to = await waitFor(() => events.find((e) => e.type === 'attention.timeout' && e.subject === req.id), 'attention.timeout');
  assert.ok(((to.data as Record<string, unknown>)['after_ms'] as number) >= 1400);
  await stopProcess(short.child);
});

test('relay unreachable: a blocking hook returns no decision within 1 s', async () => {
  // A port nobody listens on.
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const lonely = await startDaemonProcess(['--relay', `http://127.0.0.1:${port}`, '--token', TOKEN, '--quiet']);
  daemons.push(lonely.child);
  for (const [ev, payload] of [
    [
      'PreToolUse',
      {
        ...base('lonely-1'),
        hook_event_name: 'PreToolUse',
        tool_name: 'AskUserQuestion',
        tool_input: fixture('AskUserQuestion')['tool_input'],
        tool_use_id: 'toolu_l',
      },
    ],
    ['PermissionRequest', { ...base('lonely-1'), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } }],
    ['Elicitation', { ...fixture('Elicitation'), ...base('lonely-1') }],
  ] as const) {
    const r = await hook(lonely, ev, payload);
    assert.deepEqual(r.body, {}, ev);
    // The 600 ms connect grace, not the 20 s wait (generous bound: the machine is shared).
    assert.ok(r.ms < 10_000, `${ev}: no decision in ${r.ms} ms`);
  }
  await stopProcess(lonely.child);
});

test('sessions end cleanly; the whole recorded stream passes the cross-event rules', async () => {
  const seen = new Set(events.filter((e) => e.type === 'attention.requested').map((e) => e.id));
  // A question pending when the session ends is dismissed before session.ended (AEP-0002 §7.2).
  const held = hook(
    daemon,
    'PreToolUse',
    { ...base(B), hook_event_name: 'PreToolUse', tool_name: 'AskUserQuestion', tool_input: fixture('AskUserQuestion')['tool_input'], tool_use_id: 'toolu_end' },
    60_000,
  );
  const req = await waitFor(newRequest(B, seen), 'request');
  await hook(daemon, 'SessionEnd', { ...base(B), hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' });
  assert.deepEqual((await held).body, {});
  await hook(daemon, 'SessionEnd', { ...base(A), hook_event_name: 'SessionEnd', reason: 'other' });
  const endedB = await waitFor(() => events.find((e) => e.type === 'session.ended' && e.session === B), 'B ended');
  const dismissed = events.find((e) => e.type === 'attention.resolved' && e.subject === req.id);
  assert.ok(dismissed && (dismissed.seq ?? 0) < (endedB.seq ?? 0), 'dismissed before session.ended');
  await waitFor(() => events.find((e) => e.type === 'session.ended' && e.session === A), 'A ended');
  const ours = events.filter((e) => e.agent === 'claude-code' || e.type.startsWith('control.attention'));
  assert.deepEqual(validateStream(ours), []);

  // Claude Code gives up on a held hook (Esc / its own timeout): the request is dismissed.
  const seen2 = new Set(events.filter((e) => e.type === 'attention.requested').map((e) => e.id));
  const ac = new AbortController();
  const abandoned = fetch(`${daemon.url}/hooks/PermissionRequest`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon.secret}` },
    body: JSON.stringify({ ...base(A), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'make' } }),
    signal: ac.signal,
  }).catch(() => 'aborted');
  const areq = await waitFor(newRequest(A, seen2), 'request to abandon');
  ac.abort();
  assert.equal(await abandoned, 'aborted');
  await waitFor(
    () => events.find((e) => e.type === 'attention.resolved' && e.subject === areq.id && (e.data as Record<string, unknown>)['resolution'] === 'dismissed'),
    'dismissed after the hook was cancelled',
  );

  // Relay goes down while a question is held: no decision within about a second.
  const held2 = hook(
    daemon,
    'PermissionRequest',
    { ...base(A), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'make install' } },
    60_000,
  );
  await waitFor(
    () => events.find((e) => e.type === 'attention.requested' && ((e.data as Record<string, unknown>)['prompt'] as string).includes('make install')),
    'held request',
  );
  const t0 = performance.now();
  await relay.stop();
  assert.deepEqual((await held2).body, {});
  assert.ok(performance.now() - t0 < 10_000, `released ${performance.now() - t0} ms after the relay went down (grace 600 ms, wait 20 s)`);
  // And a new blocking hook while the relay is down: no decision within 1 s.
  const r = await hook(daemon, 'PermissionRequest', { ...base(A), hook_event_name: 'PermissionRequest', tool_name: 'Bash', tool_input: { command: 'ls' } });
  assert.deepEqual(r.body, {});
  assert.ok(r.ms < 10_000, `${r.ms} ms (grace 600 ms, wait 20 s)`);
});
