// Issue 12 item 1: every text the adapter emits at `redacted` passed the AEP-0003 §9.4 pipeline
// (the claim certifies provenance, AEP-0001 §8.2(e)). Property-based over the pure mapping (a key
// planted at a random place in every free-text member of every hook), then end to end with an
// `sk-proj-…` key in a prompt, a tool input, a question, an answer and a cancel reason, through
// the real daemon and relay.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CommandSender, subscribe } from '@aep/client/node';
import type { Subscription, WireEvent } from '@aep/client';
import { ClaudeCodeMapper, mappingConfig, parseHookInput } from '@aep/adapter-claude-code';
import { startRelayProcess } from '../../../test/support/cli.js';
import type { DaemonProcess } from './support/daemon.js';
import { hook, sendCommand, sendRespond, startDaemonProcess, stopProcess, waitConnected, waitFor } from './support/daemon.js';

const KEY = 'sk-proj-Q7fT2mZ9xLw4Vb8Nc1Rk5Hs3Jd6Ge0Pa';

/** Every hook with free text, the text planted in each free-text member. */
function hooks(text: string): Record<string, unknown>[] {
  const sid = 'redact-prop';
  return [
    { hook_event_name: 'SessionStart', session_id: sid, source: 'startup', cwd: `/srv/${text}` },
    { hook_event_name: 'UserPromptSubmit', session_id: sid, prompt: text },
    { hook_event_name: 'PreToolUse', session_id: sid, tool_name: 'Bash', tool_use_id: 't1', tool_input: { command: text, description: text } },
    { hook_event_name: 'PostToolUse', session_id: sid, tool_name: 'Bash', tool_use_id: 't1', tool_input: { command: text }, tool_response: { stdout: text } },
    { hook_event_name: 'PostToolUseFailure', session_id: sid, tool_name: 'Bash', tool_use_id: 't2', tool_input: { command: text }, error: text },
    { hook_event_name: 'PermissionRequest', session_id: sid, tool_name: 'Bash', tool_input: { command: text } },
    { hook_event_name: 'PermissionRequest', session_id: sid, tool_name: 'Write', tool_input: { file_path: '/tmp/a', content: text } },
    {
      hook_event_name: 'PreToolUse',
      session_id: sid,
      tool_name: 'AskUserQuestion',
      tool_use_id: 't3',
      tool_input: { questions: [{ question: text, header: 'H', options: [{ label: text }, { label: 'other' }] }] },
    },
    { hook_event_name: 'Notification', session_id: sid, notification_type: 'auth_success', message: text },
    { hook_event_name: 'Notification', session_id: sid, notification_type: 'idle_prompt', message: text },
    {
      hook_event_name: 'Elicitation',
      session_id: sid,
      mcp_server_name: 'srv',
      mode: 'form',
      message: text,
      requested_schema: { type: 'object', properties: { a: { type: 'string', title: text }, b: { type: 'string', enum: ['x', 'y'], enumNames: [text, 'Y'] } } },
    },
    { hook_event_name: 'Elicitation', session_id: sid, mcp_server_name: 'srv', mode: 'url', message: text, url: `https://x/${text}` },
    { hook_event_name: 'Stop', session_id: sid, last_assistant_message: text },
    { hook_event_name: 'SubagentStart', session_id: sid, agent_id: 'a1', agent_type: text },
  ];
}

function mapAll(capture: 'metadata' | 'redacted' | 'full', text: string): string {
  const m = new ClaudeCodeMapper(mappingConfig({ capture }));
  const out: unknown[] = [];
  for (const h of hooks(text)) {
    const r = m.map(parseHookInput(h), 0);
    out.push(...r.events);
    if (r.attention) out.push(r.attention.request);
  }
  return JSON.stringify(out);
}

test('property: a key planted anywhere in any free-text member never leaves the mapping at redacted (and never at metadata)', () => {
  const runs = Number(process.env['AEP_FUZZ_RUNS'] ?? 100);
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), fc.string({ maxLength: 40 }), fc.constantFrom(' ', '\n', '=', ': ', '"'), (before, afterText, sep) => {
      const text = `${before}${sep}${KEY}${sep}${afterText}`;
      const red = mapAll('redacted', text);
      assert.ok(!red.includes(KEY), 'no key at redacted');
      assert.ok(!mapAll('metadata', text).includes(KEY), 'no key at metadata');
    }),
    { numRuns: runs },
  );
  // The planted key is really there to find: at full (verbatim by definition) it is present.
  assert.ok(mapAll('full', `run with ${KEY}`).includes(KEY));
});

const TOKEN = 'redaction-test-token-77f1c0';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let sub: Subscription;
let sender: CommandSender;
const events: WireEvent[] = [];
let daemon: DaemonProcess;

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  sub = subscribe({ url: relay.url, token: TOKEN, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  sender = await CommandSender.connect({ url: relay.url, token: TOKEN, agent: 'answerer', ackWindowMs: 5_000, retries: 0 });
  daemon = await startDaemonProcess(['--relay', relay.url, '--token', TOKEN, '--wait-ms', '60000', '--agent', 'cc-redact', '--capture', 'redacted']);
  await waitConnected(daemon);
});

after(async () => {
  await sender?.close();
  sub?.close();
  await stopProcess(daemon.child);
  await relay?.stop();
});

test('end to end at capture redacted: an sk-proj key in a prompt, a tool input, a question, an answer and a cancel reason never reaches the relay', async () => {
  const S = 'redact-e2e';
  await hook(daemon, 'UserPromptSubmit', { hook_event_name: 'UserPromptSubmit', session_id: S, prompt: `Deploy with OPENAI_API_KEY=${KEY} please` });
  await hook(daemon, 'PreToolUse', {
    hook_event_name: 'PreToolUse',
    session_id: S,
    tool_name: 'Bash',
    tool_use_id: 'toolu_k1',
    tool_input: { command: `curl -H "Authorization: Bearer ${KEY}" https://api.example` },
  });
  const ask = hook(
    daemon,
    'PreToolUse',
    {
      hook_event_name: 'PreToolUse',
      session_id: S,
      tool_name: 'AskUserQuestion',
      tool_use_id: 'toolu_k2',
      tool_input: { questions: [{ question: `Use the key ${KEY}?`, header: 'Key', options: [{ label: 'yes' }, { label: 'no' }] }] },
    },
    60_000,
  );
  const form = await waitFor(() => events.find((e) => e.type === 'attention.requested' && e.session === S), 'the form');
  // The person answers with free text containing the key ("other"); Claude gets it verbatim.
  const r = await sendRespond(sender, form, { values: { '1': `rotate ${KEY} first` } });
  assert.equal(r.status, 'accepted', JSON.stringify(r));
  const out = (await ask).body as { hookSpecificOutput: { updatedInput: { answers: Record<string, string> } } };
  assert.equal(out.hookSpecificOutput.updatedInput.answers[`Use the key ${KEY}?`], `rotate ${KEY} first`, 'the agent gets the real answer');
  const perm = hook(
    daemon,
    'PermissionRequest',
    { hook_event_name: 'PermissionRequest', session_id: S, tool_name: 'Bash', tool_input: { command: `echo ${KEY} > ~/.key` } },
    60_000,
  );
  await waitFor(
    () => events.find((e) => e.type === 'attention.requested' && e.session === S && (e.data as Record<string, unknown>)['kind'] === 'permission'),
    'the permission request',
  );
  const run = events.find((e) => e.type === 'run.started' && e.session === S)!.run!;
  assert.equal(
    (await sendCommand(sender, 'control.cancel', S, { scope: 'run', reason: `leaked ${KEY}, stop` }, { run, capture: 'redacted' })).status,
    'accepted',
  );
  await perm;
  const cancelled = await waitFor(() => events.find((e) => e.type === 'run.cancelled' && e.session === S), 'run.cancelled');
  await waitFor(() => events.find((e) => e.type === 'attention.answered' && e.session === S), 'attention.answered');
  const ours = events.filter((e) => e.session === S && e.agent === 'cc-redact');
  assert.ok(ours.length >= 8);
  for (const e of ours) {
    assert.ok(!JSON.stringify(e).includes(KEY), `${e.type} carries no key`);
    if (e.data !== undefined) assert.equal(e.capture, 'redacted', `${e.type} claims redacted`);
  }
  assert.match(JSON.stringify(events.find((e) => e.type === 'run.started' && e.session === S)), /\[REDACTED:secret\]/, 'the pipeline ran (not a drop)');
  assert.match(String((cancelled.data as Record<string, unknown>)['reason']), /\[REDACTED:secret\]/);
  const answered = events.find((e) => e.type === 'attention.answered' && e.session === S)!;
  assert.match(JSON.stringify(answered.data), /rotate \[REDACTED:secret\] first/);
});
