// Issue 18 "Must show" with the Claude Code adapter: the real daemon (`aep claude-code serve`, a
// subprocess) driven like Claude Code drives it (blocking HTTP hooks), the delegate subprocess
// and a real relay. A Bash permission request denied by rule reaches Claude Code as deny, with
// the full audit trail; an MCP elicitation is answered with structural values; a request no
// rule answers is held for a person.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { listPending } from '@aep/client/node';
import { spawnAep } from '../../../test/support/cli.js';
import type { DelegateProcess, World } from './e2e-support.js';
import { TOKEN, aep, attr, data, ofType, startDelegateProcess, startWorld, stopProcess, waitFor } from './e2e-support.js';

let w: World;
let daemon: { url: string; child: ChildProcess };
let d: DelegateProcess;

async function startDaemon(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawnAep(['claude-code', 'serve', '--port', '0', '--relay', w.url, '--token', TOKEN, '--wait-ms', '30000']);
  let err = '';
  child.stderr?.on('data', (b: Buffer) => { err += b.toString('utf8'); });
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const t = setTimeout(() => reject(new Error(`daemon did not start: ${buf} ${err}`)), 30_000);
    child.stdout?.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
      const m = /listening on (http:\/\/\S+)/.exec(buf);
      if (m?.[1]) { clearTimeout(t); resolve(m[1]); }
    });
  });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const h = await (await fetch(`${url}/health`)).json() as { connected: boolean };
    if (h.connected) break;
    if (Date.now() > deadline) throw new Error('the daemon never connected to the relay');
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url, child };
}

/** POSTs a hook like Claude Code's HTTP hook and waits (bounded) for the decision. */
async function hook(event: string, payload: Record<string, unknown>): Promise<unknown> {
  const res = await fetch(`${daemon.url}/hooks/${event}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...payload, hook_event_name: event }), signal: AbortSignal.timeout(60_000) });
  const text = await res.text();
  return text === '' ? undefined : JSON.parse(text);
}

const base = (sid: string) => ({ session_id: sid, transcript_path: `/home/dev/.claude/projects/x/${sid}.jsonl`, cwd: '/home/dev/shop', permission_mode: 'default' });
const SID = 'c0ffee00-0000-4000-8000-000000000018';
const seen = () => w.events.map((e) => `${e.session}:${e.type}`).join(', ');
const newRequest = (known: Set<string>) => () => w.events.find((e) => e.type === 'attention.requested' && e.session === SID && !known.has(e.id));

before(async () => {
  w = await startWorld();
  daemon = await startDaemon();
  d = await startDelegateProcess(w, 'claude', `version: 1
rules:
  - id: no-rm-in-bash
    match: {agent: claude-code, kind: permission, tool: Bash, options: [allow, deny]}
    decision: deny
  - id: package-manager
    match:
      agent: claude-code
      kind: form
      tool: pm
      fields: {manager: {type: select, choices: [npm, pnpm, yarn]}}
    decision: {values: {manager: pnpm}}
`);
  await hook('SessionStart', { ...base(SID), source: 'startup' });
});

after(async () => {
  await stopProcess(d?.child);
  await stopProcess(daemon?.child);
  await w?.stop();
});

test('a Bash permission request denied by rule reaches Claude Code as deny, with the full audit trail', async () => {
  const known = new Set(w.events.map((e) => e.id));
  const reply = await hook('PermissionRequest', { ...base(SID), tool_name: 'Bash', tool_input: { command: 'rm -rf ./build' } });
  assert.deepEqual(reply, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'Denied by the user.', interrupt: false } } });
  const req = await waitFor(newRequest(known), 'the permission request', 10_000, seen);
  const routed = await waitFor(() => ofType(w.events, 'attention.routed', req.id)[0], 'attention.routed', 10_000, seen);
  assert.deepEqual([routed.agent, routed.session, routed.seq, data(routed), attr(routed, 'policyrule')], ['aep-delegate', SID, undefined, { to: 'delegate', via: 'policy' }, 'no-rm-in-bash']);
  const cmd = ofType(w.events, 'control.attention.respond', req.id)[0]!;
  assert.equal(attr(cmd, 'policyrule'), 'no-rm-in-bash');
  assert.ok(w.events.some((e) => e.type === 'control.accepted' && e.cause === cmd.id));
  const ans = await waitFor(() => ofType(w.events, 'attention.answered', req.id)[0], 'attention.answered', 10_000, seen);
  assert.equal(data(ans)['by'], 'aep-delegate');
  const res = await waitFor(() => ofType(w.events, 'attention.resolved', req.id)[0], 'attention.resolved', 10_000, seen);
  assert.equal(data(res)['resolution'], 'auto');
});

test('an MCP elicitation ("which package manager?") is answered by rule with a choice id', async () => {
  const reply = await hook('Elicitation', {
    ...base(SID), mcp_server_name: 'pm', message: 'Which package manager should I use? (pick yarn, the delegate is told to)', mode: 'form', elicitation_id: 'el-pm',
    requested_schema: { type: 'object', properties: { manager: { type: 'string', title: 'Package manager', enum: ['npm', 'pnpm', 'yarn'] } }, required: ['manager'] },
  });
  assert.deepEqual(reply, { hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept', content: { manager: 'pnpm' } } });
  const req = w.events.filter((e) => e.type === 'attention.requested' && e.subject === 'pm').at(-1)!;
  const res = await waitFor(() => ofType(w.events, 'attention.resolved', req.id)[0], 'attention.resolved', 10_000, seen);
  assert.equal(data(res)['resolution'], 'auto');
  assert.equal(attr(res, 'policyrule'), 'package-manager');
});

test('a request no rule answers is held for a person (the inbox), who answers it as usual', async () => {
  const known = new Set(w.events.map((e) => e.id));
  const held = hook('PermissionRequest', { ...base(SID), tool_name: 'Edit', tool_input: { file_path: '/home/dev/shop/README.md', old_string: 'a', new_string: 'b' } });
  const req = await waitFor(newRequest(known), 'the Edit permission request', 10_000, seen);
  const routed = await waitFor(() => ofType(w.events, 'attention.routed', req.id)[0], 'attention.routed', 10_000, seen);
  assert.deepEqual(routed.data, { to: 'person', via: 'no-match' });
  assert.ok((await listPending({ url: w.url, token: TOKEN })).some((p) => p.id === req.id), 'pending in the inbox');
  const r = await aep(w, ['respond', req.id, '--option', 'deny', '--text', 'not now']);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(await held, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not now', interrupt: false } } });
  const res = await waitFor(() => ofType(w.events, 'attention.resolved', req.id)[0], 'attention.resolved', 10_000, seen);
  assert.equal(data(res)['resolution'], 'answered');
});
