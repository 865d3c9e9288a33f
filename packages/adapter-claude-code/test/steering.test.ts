// Issue 14 item 4 / contract C8: steering a Claude Code session through the real relay and the
// real daemon (subprocess). control.cancel ends the turn (ack, then run.cancelled cause-linked),
// dismisses held questions and denies the next tool calls with the person's reason;
// control.pause holds tool calls at PreToolUse until control.resume or the hook's budget; commands
// the daemon did not declare are nacked `unsupported`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { CommandSender, subscribe } from '@aep/client/node';
import type { Subscription, WireEvent } from '@aep/client';
import { startRelayProcess } from '../../../test/support/cli.js';
import type { DaemonProcess } from './support/daemon.js';
import { fixture, hook, sendCommand, startDaemonProcess, stopProcess, waitConnected, waitFor } from './support/daemon.js';

const TOKEN = 'steering-test-token-3e9a04';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let sub: Subscription;
let sender: CommandSender;
const events: WireEvent[] = [];
let daemon: DaemonProcess;
let brief: DaemonProcess;

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  sub = subscribe({ url: relay.url, token: TOKEN, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  sender = await CommandSender.connect({ url: relay.url, token: TOKEN, agent: 'steerer', ackWindowMs: 5_000, retries: 0 });
  daemon = await startDaemonProcess(['--relay', relay.url, '--token', TOKEN, '--wait-ms', '60000', '--agent', 'cc-steer']);
  brief = await startDaemonProcess(['--relay', relay.url, '--token', TOKEN, '--wait-ms', '1500', '--agent', 'cc-brief']);
  await waitConnected(daemon);
  await waitConnected(brief);
});

after(async () => {
  await sender?.close();
  sub?.close();
  await stopProcess(daemon.child);
  await stopProcess(brief.child);
  await relay?.stop();
});

const prompt = (d: DaemonProcess, session: string) =>
  hook(d, 'UserPromptSubmit', { hook_event_name: 'UserPromptSubmit', session_id: session, prompt: 'Refactor the billing module' });
const bash = (d: DaemonProcess, session: string, command: string, id: string, timeoutMs?: number) =>
  hook(d, 'PreToolUse', { hook_event_name: 'PreToolUse', session_id: session, tool_name: 'Bash', tool_use_id: id, tool_input: { command } }, timeoutMs);
const runOf = (session: string) => events.find((e) => e.type === 'run.started' && e.session === session)?.run;

async function held<T>(p: Promise<T>): Promise<boolean> {
  return (await Promise.race([p.then(() => 'answered'), new Promise((r) => setTimeout(() => r('held'), 300))])) === 'held';
}

test('control.cancel: ack, held question dismissed and denied, run.cancelled cause-linked, next tool calls denied with the reason until a new turn', async () => {
  const S = 'steer-cancel';
  await prompt(daemon, S);
  const run = await waitFor(() => runOf(S), 'run.started');
  const ask = hook(daemon, 'PreToolUse', { ...fixture('AskUserQuestion'), session_id: S, tool_use_id: 'toolu_q1' }, 60_000);
  const form = await waitFor(() => events.find((e) => e.type === 'attention.requested' && e.session === S), 'the held form');
  const reason = 'Stop: you are on the wrong branch';
  const r = await sendCommand(sender, 'control.cancel', S, { scope: 'run', reason }, { run, capture: 'redacted' });
  assert.equal(r.status, 'accepted', JSON.stringify(r));
  const deny = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
  assert.deepEqual((await ask).body, deny, 'the held question is answered with the denial');
  const cancelled = await waitFor(() => events.find((e) => e.type === 'run.cancelled' && e.session === S), 'run.cancelled');
  assert.equal(cancelled.run, run);
  assert.equal(cancelled.cause, r.command.id, 'cause-linked to the command');
  assert.equal((cancelled.data as Record<string, unknown>)['by'], 'control');
  const ack = events.find((e) => e.type === 'control.accepted' && e.cause === r.command.id)!;
  assert.ok((ack.seq ?? 0) < (cancelled.seq ?? 0), 'the ack comes first (AEP-0004 §1)');
  const dismissed = events.find((e) => e.type === 'attention.resolved' && e.subject === form.id)!;
  assert.equal((dismissed.data as Record<string, unknown>)['resolution'], 'dismissed');
  // The next tool calls of the turn are denied with the person's reason.
  assert.deepEqual((await bash(daemon, S, 'git push --force', 'toolu_b1')).body, deny);
  assert.deepEqual(
    (
      await hook(daemon, 'PermissionRequest', {
        hook_event_name: 'PermissionRequest',
        session_id: S,
        tool_name: 'Bash',
        tool_input: { command: 'rm -rf build' },
      })
    ).body,
    { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: reason, interrupt: true } } },
  );
  // A subagent of the cancelled session is stopped too.
  assert.deepEqual(
    (
      await hook(daemon, 'PreToolUse', {
        hook_event_name: 'PreToolUse',
        session_id: S,
        agent_id: 'agent-9',
        agent_type: 'Explore',
        tool_name: 'Grep',
        tool_use_id: 'toolu_sub',
        tool_input: { pattern: 'x' },
      })
    ).body,
    deny,
  );
  // The Stop of the cancelled turn emits no second terminal.
  await hook(daemon, 'Stop', { hook_event_name: 'Stop', session_id: S });
  // The person starts a new turn in Claude Code: tools run again.
  await prompt(daemon, S);
  assert.deepEqual((await bash(daemon, S, 'git status', 'toolu_b2')).body, {});
  await waitFor(() => (events.filter((e) => e.type === 'run.started' && e.session === S).length === 2 ? true : undefined), 'the second run');
  assert.equal(
    events.filter((e) => e.session === S && e.type.startsWith('run.') && e.type !== 'run.started' && e.run === run).length,
    1,
    'one terminal for the cancelled run',
  );
});

test('control.cancel refusals: a bad scope is invalid, another run or no turn is refused, an ended session is refused', async () => {
  const S = 'steer-refuse';
  const noTurn = await sendCommand(sender, 'control.cancel', S, { scope: 'session' });
  // The relay routes by claim: before any event of S the daemon does not own it.
  assert.ok(noTurn.status === 'refused' || noTurn.status === 'rejected', JSON.stringify(noTurn));
  await hook(daemon, 'SessionStart', { hook_event_name: 'SessionStart', session_id: S, source: 'startup' });
  await waitFor(() => events.find((e) => e.type === 'session.started' && e.session === S), 'session.started');
  const idle = await sendCommand(sender, 'control.cancel', S, { scope: 'session' });
  assert.deepEqual([idle.status, idle.reason], ['rejected', 'refused'], 'no turn in progress');
  await prompt(daemon, S);
  const run = await waitFor(() => runOf(S), 'run.started');
  // Built by hand: our own builder refuses to emit a bad scope; another sender might not.
  const bad = await sender.send({
    aep: '0.1',
    id: `01BADSCOPE${Date.now()}`,
    type: 'control.cancel',
    time: new Date().toISOString(),
    source: 'aep://test/agent/steerer',
    agent: 'steerer',
    session: S,
    data: { scope: 'everything' },
  } as WireEvent);
  assert.deepEqual([bad.status, bad.reason], ['rejected', 'invalid']);
  assert.deepEqual(
    bad.issues?.map((i) => i.rule),
    ['control.cancel.scope'],
  );
  const other = await sendCommand(sender, 'control.cancel', S, { scope: 'run' }, { run: `${run}-not` });
  assert.deepEqual([other.status, other.reason], ['rejected', 'refused']);
  assert.deepEqual((await bash(daemon, S, 'ls', 'toolu_r1')).body, {}, 'nothing was armed by the refusals');
  const scoped = await sendCommand(sender, 'control.cancel', S, { scope: 'session' });
  assert.equal(scoped.status, 'accepted');
  const denied = (await bash(daemon, S, 'ls', 'toolu_r2')).body as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
  assert.equal(denied.hookSpecificOutput.permissionDecision, 'deny');
  assert.match(denied.hookSpecificOutput.permissionDecisionReason, /Cancelled by the user from steerer/, 'a default reason Claude reads');
  await hook(daemon, 'SessionEnd', { hook_event_name: 'SessionEnd', session_id: S, reason: 'other' });
  await waitFor(() => events.find((e) => e.type === 'session.ended' && e.session === S), 'session.ended');
  const ended = await sendCommand(sender, 'control.cancel', S, { scope: 'session' });
  assert.ok(ended.reason === 'refused' || ended.reason === 'no-route', JSON.stringify(ended));
});

test('control.pause holds the next tool call until control.resume; progress.status records both, cause-linked', async () => {
  const S = 'steer-pause';
  await prompt(daemon, S);
  await waitFor(() => runOf(S), 'run.started');
  const p = await sendCommand(sender, 'control.pause', S, undefined);
  assert.equal(p.status, 'accepted', JSON.stringify(p));
  const paused = await waitFor(() => events.find((e) => e.type === 'progress.status' && e.session === S && e.cause === p.command.id), 'paused status');
  assert.deepEqual(paused.data, { phase: 'paused' });
  const tool = bash(daemon, S, 'npm test', 'toolu_p1', 60_000);
  assert.ok(await held(tool), 'the tool call waits');
  const again = await sendCommand(sender, 'control.pause', S, undefined);
  assert.equal(again.status, 'accepted', 'pause is idempotent');
  const r = await sendCommand(sender, 'control.resume', S, undefined);
  assert.equal(r.status, 'accepted');
  assert.deepEqual((await tool).body, {}, 'resumed: Claude Code proceeds as it would have');
  const resumed = await waitFor(() => events.find((e) => e.type === 'progress.status' && e.session === S && e.cause === r.command.id), 'resumed status');
  assert.deepEqual(resumed.data, { phase: 'resumed' });
  const notPaused = await sendCommand(sender, 'control.resume', S, undefined);
  assert.deepEqual([notPaused.status, notPaused.reason], ['rejected', 'refused']);
  assert.deepEqual((await bash(daemon, S, 'npm test', 'toolu_p2')).body, {}, 'no longer paused');
  // A paused AskUserQuestion is raised after the resume, and answerable.
  await sendCommand(sender, 'control.pause', S, undefined);
  const ask = hook(daemon, 'PreToolUse', { ...fixture('AskUserQuestion'), session_id: S, tool_use_id: 'toolu_p3' }, 60_000);
  assert.ok(await held(ask));
  assert.equal(
    events.some((e) => e.type === 'attention.requested' && e.session === S),
    false,
    'not raised while paused',
  );
  await sendCommand(sender, 'control.resume', S, undefined);
  await waitFor(() => events.find((e) => e.type === 'attention.requested' && e.session === S), 'the form after resume');
  await sendCommand(sender, 'control.cancel', S, { scope: 'session', reason: 'enough' }, { capture: 'redacted' });
  assert.equal(((await ask).body as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision, 'deny');
});

test('a pause cannot outlast the hook budget (the tool call falls back); a cancel during a pause denies the held call', async () => {
  const S = 'steer-budget';
  await prompt(brief, S);
  await waitFor(() => runOf(S), 'run.started');
  assert.equal((await sendCommand(sender, 'control.pause', S, undefined)).status, 'accepted');
  await waitFor(() => events.find((e) => e.type === 'progress.status' && e.session === S), 'paused');
  assert.deepEqual((await bash(brief, S, 'make', 'toolu_t1')).body, {}, 'after --wait-ms: no decision (Claude Code proceeds as usual)');
  const heldTool = bash(brief, S, 'make deploy', 'toolu_t2', 60_000);
  assert.ok(await held(heldTool));
  assert.equal((await sendCommand(sender, 'control.cancel', S, { scope: 'session', reason: 'not now' }, { capture: 'redacted' })).status, 'accepted');
  assert.deepEqual((await heldTool).body, {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not now' },
  });
});

test('commands the daemon does not declare are nacked unsupported', async () => {
  const S = 'steer-unsupported';
  await prompt(daemon, S);
  await waitFor(() => runOf(S), 'run.started');
  const r = await sendCommand(sender, 'x.acme.control.restart', S, undefined);
  assert.equal(r.reason, 'unsupported', JSON.stringify(r));
});
