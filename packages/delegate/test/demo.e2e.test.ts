// Issue 18 "Must show", with the demo agent (`aep demo agent`, a real subprocess) and the
// delegate (`aep delegate`, a real subprocess) on a real relay: a matching request is answered
// by rule with the full audit trail; a non-matching one stays for a person (the inbox); shadow
// mode answers nothing; the kill switch (file, and `aep delegate pause`) stops answering at once.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { validateStream } from '@aep/protocol';
import { listPending } from '@aep/client/node';
import type { DelegateProcess, JsonProcess, World } from './e2e-support.js';
import { runAep } from '../../../test/support/cli.js';
import { TOKEN, aep, aepDelegate, attr, data, ofType, spawnJson, startDelegateProcess, startWorld, stopProcess, waitFor } from './e2e-support.js';

let w: World;
const procs: JsonProcess[] = [];

before(async () => {
  w = await startWorld();
});
after(async () => {
  for (const p of procs) await stopProcess(p.child);
  await w?.stop();
});

function demo(session: string, only: 'form' | 'permission'): JsonProcess {
  const p = spawnJson(['demo', 'agent', '--only', only, '--session', session, '--relay', w.url, '--token', TOKEN]);
  procs.push(p);
  return p;
}

async function requested(p: JsonProcess): Promise<string> {
  const line = await waitFor(() => p.lines.find((l) => l['event'] === 'requested'), "the demo agent's request", 30_000, p.stderr);
  return String(line['id']);
}

/** A delegate of its own identity (`aep-delegate` for the first, `aep-delegate-NAME` after), so tests tell their events apart. */
async function delegate(name: string, policy: string, extra: string[] = []): Promise<DelegateProcess> {
  const d = await startDelegateProcess(w, name, policy, [
    ...extra,
    '--session',
    `delegate-${name}`,
    ...(name === 'audit' ? [] : ['--agent', `aep-delegate-${name}`]),
  ]);
  procs.push(d);
  return d;
}

const routedFor = (id: string, agent?: string) => ofType(w.events, 'attention.routed', id).filter((e) => agent === undefined || e.agent === agent);
const seen = () => w.events.map((e) => `${e.session}:${e.type}`).join(', ');

test('a matching request is answered by rule, with the full audit trail, and explain says why', async () => {
  const d = await delegate(
    'audit',
    `version: 1
rules:
  - id: deny-demo-bash
    match: {agent: demo-agent, session: demo-audit, kind: permission, tool: Bash}
    decision: deny
`,
  );
  const agent = demo('demo-audit', 'permission');
  const id = await requested(agent);
  const answered = await waitFor(() => agent.lines.find((l) => l['event'] === 'answered'), 'the demo agent to get its answer', 30_000, agent.stderr);
  assert.equal(answered['option'], 'deny');

  // attention.routed: foreign emitter (the delegate's agent and source), the request's session, no seq.
  const routed = await waitFor(() => routedFor(id)[0], 'attention.routed', 10_000, seen);
  assert.equal(routed.agent, 'aep-delegate');
  assert.match(routed.source, /\/agent\/aep-delegate\//);
  assert.equal(routed.session, 'demo-audit');
  assert.equal(routed.seq, undefined);
  assert.equal(routed.cause, id);
  assert.deepEqual(routed.data, { to: 'delegate', via: 'policy' });
  assert.equal(attr(routed, 'policyrule'), 'deny-demo-bash');
  // The command carries the rule; the agent acks it and records who answered and how.
  const cmd = await waitFor(() => ofType(w.events, 'control.attention.respond', id)[0], 'the command', 10_000, seen);
  assert.equal(cmd.agent, 'aep-delegate');
  assert.equal(attr(cmd, 'policyrule'), 'deny-demo-bash');
  assert.deepEqual(data(cmd)['answer'], { option: 'deny' });
  const ack = await waitFor(() => w.events.find((e) => e.type === 'control.accepted' && e.cause === cmd.id), 'control.accepted', 10_000, seen);
  assert.equal(ack.agent, 'demo-agent');
  const ans = await waitFor(() => ofType(w.events, 'attention.answered', id)[0], 'attention.answered', 10_000, seen);
  assert.equal(data(ans)['by'], 'aep-delegate');
  assert.equal(attr(ans, 'policyrule'), 'deny-demo-bash');
  const res = await waitFor(() => ofType(w.events, 'attention.resolved', id)[0], 'attention.resolved', 10_000, seen);
  assert.equal(data(res)['resolution'], 'auto');
  // Order of the trail: routed, command, ack, answered, resolved.
  const order = [routed, cmd, ack, ans, res].map((e) => w.events.indexOf(e));
  assert.deepEqual(
    [...order].sort((a, b) => a - b),
    order,
    'routed -> command -> accepted -> answered -> resolved',
  );
  // The session's history (with the delegate's foreign routed event) is a valid AEP stream.
  await waitFor(
    () => agent.child.exitCode !== null && ofType(w.events, 'session.ended').some((e) => e.session === 'demo-audit'),
    'the demo agent to end its session',
    20_000,
  );
  assert.deepEqual(
    validateStream(w.events.filter((e) => e.session === 'demo-audit')).map((i) => `${i.rule}: ${i.message}`),
    [],
  );
  // The decision log: 0600 in a 0700 directory; explain names the rule and why.
  const log = `${d.stateDir}/decisions.jsonl`;
  assert.equal(statSync(log).mode & 0o777, 0o600);
  assert.equal(statSync(d.stateDir).mode & 0o777, 0o700);
  const ex = await runExplain(d, id);
  assert.equal(ex.code, 0, ex.stderr);
  assert.match(ex.stdout, /answered by rule: deny-demo-bash -> option deny/);
  assert.match(
    ex.stdout,
    /deny\s+deny-demo-bash\s+MATCH\s+agent demo-agent matches demo-agent; session demo-audit matches demo-audit; tool Bash matches Bash; kind permission/,
  );
  assert.match(ex.stdout, /command \S+ \(deny-demo-bash\): accepted/);
  const unknown = await runExplain(d, '01NOSUCHREQUEST00000000000');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /AEP_DELEGATE_NOT_FOUND/);
  assert.equal(d.decisions().find((r) => r['request'] === id)?.['outcome'], 'policy');
  await stopProcess(d.child);
});

function runExplain(d: DelegateProcess, id: string) {
  return runAep(['delegate', 'explain', id, '--state-dir', d.stateDir]);
}

test('a request no rule can answer reaches the inbox: pending, routed to a person, answered by a person as usual', async () => {
  // The demo form has a required free-text field (Bucket name): no values rule can ever answer it.
  const d = await delegate(
    'inbox',
    `version: 1
rules:
  - id: backup-defaults
    match: {agent: demo-agent, session: demo-inbox, kind: form}
    decision: {values: {"2": 30, "3": true, "4": ["1", "3"]}}
`,
  );
  const agent = demo('demo-inbox', 'form');
  const id = await requested(agent);
  const routed = await waitFor(() => routedFor(id, 'aep-delegate-inbox')[0], 'attention.routed', 15_000, seen);
  assert.deepEqual(routed.data, { to: 'person', via: 'no-match' });
  assert.equal(attr(routed, 'policyrule'), undefined);
  const pending = await listPending({ url: w.url, token: TOKEN });
  assert.ok(
    pending.some((p) => p.id === id),
    'still pending: it is in the inbox',
  );
  assert.equal(ofType(w.events, 'control.attention.respond', id).length, 0, 'the delegate sent nothing');
  const ex = await runExplain(d, id);
  assert.match(ex.stdout, /left to a person: no rule matched/);
  assert.match(
    ex.stdout,
    /backup-defaults\s+no match\s+matched, but its decision does not fit: required field 1 is not answered \(it takes text: a person answers it\)/,
  );
  // A person answers it: recorded as answered (not auto).
  const r = await aep(w, ['respond', id, '--values', '{"1":"nightly","2":30}']);
  assert.equal(r.code, 0, r.stderr);
  const res = await waitFor(() => ofType(w.events, 'attention.resolved', id)[0], 'attention.resolved', 10_000, seen);
  assert.equal(data(res)['resolution'], 'answered');
  assert.equal(attr(res, 'policyrule'), undefined);
  await stopProcess(d.child);
});

test('shadow mode logs what it would answer and answers nothing', async () => {
  const d = await delegate(
    'shadow',
    `version: 1
shadow: true
rules:
  - id: deny-demo-bash
    match: {session: demo-shadow, tool: Bash}
    decision: deny
`,
  );
  const agent = demo('demo-shadow', 'permission');
  const id = await requested(agent);
  const routed = await waitFor(() => routedFor(id, 'aep-delegate-shadow')[0], 'attention.routed', 15_000, seen);
  assert.deepEqual(routed.data, { to: 'person', via: 'shadow' });
  assert.equal(attr(routed, 'policyrule'), 'deny-demo-bash');
  // The routed event and the decision come from one synchronous step: no command follows it.
  await waitFor(() => d.decisions().find((r) => r['request'] === id), 'the decision line');
  const rec = d.decisions().find((r) => r['request'] === id)!;
  assert.deepEqual([rec['outcome'], rec['rule'], rec['answer']], ['shadow', 'deny-demo-bash', { option: 'deny' }]);
  assert.equal(ofType(w.events, 'control.attention.respond', id).length, 0);
  assert.ok(
    (await listPending({ url: w.url, token: TOKEN })).some((p) => p.id === id),
    'still pending',
  );
  assert.match((await runExplain(d, id)).stdout, /would have answered \(shadow mode\): nothing was sent: deny-demo-bash -> option deny/);
  await stopProcess(agent.child); // dismisses its request
  await stopProcess(d.child);
});

test('the kill switch stops answering at once (a file, and aep delegate pause); removing it or resume answers again', async () => {
  const d = await delegate(
    'kill',
    `version: 1
rules:
  - id: deny-demo-bash
    match: {session: [demo-kill-*], tool: Bash}
    decision: deny
`,
  );
  // 1. The file.
  writeFileSync(d.killSwitch, '');
  const a1 = demo('demo-kill-1', 'permission');
  const id1 = await requested(a1);
  const r1 = await waitFor(() => routedFor(id1, 'aep-delegate-kill')[0], 'attention.routed', 15_000, seen);
  assert.deepEqual(r1.data, { to: 'person', via: 'paused' });
  assert.equal(attr(r1, 'policyrule'), 'deny-demo-bash');
  assert.equal(ofType(w.events, 'control.attention.respond', id1).length, 0, 'nothing was sent while the file exists');
  rmSync(d.killSwitch);
  const ans1 = await waitFor(() => a1.lines.find((l) => l['event'] === 'answered'), 'the answer once the file is gone', 20_000, a1.stderr);
  assert.equal(ans1['option'], 'deny');
  assert.deepEqual(
    routedFor(id1, 'aep-delegate-kill').map((e) => data(e)['via']),
    ['paused', 'policy'],
    'announced again when the decision changed',
  );

  // 2. aep delegate pause: control.pause to the delegate's own session.
  const p = await aepDelegate(w, ['pause', '--session', 'delegate-kill']);
  assert.equal(p.code, 0, p.stderr);
  await waitFor(() => w.events.find((e) => e.session === 'delegate-kill' && e.type === 'progress.status' && data(e)['phase'] === 'paused'), 'the paused state');
  assert.ok(existsSync(`${d.stateDir}/paused`), 'the pause survives a restart');
  const a2 = demo('demo-kill-2', 'permission');
  const id2 = await requested(a2);
  assert.deepEqual((await waitFor(() => routedFor(id2, 'aep-delegate-kill')[0], 'attention.routed', 15_000, seen)).data, { to: 'person', via: 'paused' });
  assert.equal(ofType(w.events, 'control.attention.respond', id2).length, 0);
  const r = await aepDelegate(w, ['resume', '--session', 'delegate-kill']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal((await waitFor(() => a2.lines.find((l) => l['event'] === 'answered'), 'the answer after resume', 20_000, a2.stderr))['option'], 'deny');
  assert.ok(!existsSync(`${d.stateDir}/paused`));

  // Pausing a session where no delegate listens is refused, with a stable code.
  const none = await aepDelegate(w, ['pause', '--session', 'no-such-delegate', '--ack-window', '2000']);
  assert.equal(none.code, 3);
  assert.match(none.stderr, /AEP_DELEGATE_REFUSED: refused by the relay: no-route/);
  await stopProcess(d.child);
});

test('aep delegate --check, --help and the policy errors from the command line', async () => {
  writeFileSync(`${w.dir}/ok.yaml`, 'version: 1\nrules:\n  - {id: a, match: {tool: Bash}, decision: deny}\n');
  const ok = await aepDelegate(w, ['--policy', `${w.dir}/ok.yaml`, '--check']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /is valid: 1 rule, engine builtin/);
  writeFileSync(`${w.dir}/bad.yaml`, 'version: 1\nrules:\n  - id: a\n    match:\n      prompt: "rm -rf"\n    decision: deny\n');
  const bad = await aepDelegate(w, ['--policy', `${w.dir}/bad.yaml`, '--check']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^aep: AEP_DELEGATE_POLICY: bad\.yaml:5: rules\[0\]\.match\.prompt: a rule can never see or match free text/);
  const missing = await aepDelegate(w, ['--policy', `${w.dir}/nope.yaml`]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /AEP_DELEGATE_POLICY_READ: cannot read the policy file .*ENOENT/);
  for (const sub of ['run', 'explain', 'pause', 'resume', 'grant', 'revoke', 'grants', 'digest']) {
    const h = await aepDelegate(w, [sub, '--help']);
    assert.equal(h.code, 0, sub);
    assert.match(h.stdout, new RegExp(`Usage: aep delegate ${sub}`), sub);
  }
  const digest = await runAep(['delegate', 'digest', 'npm test']);
  const { approvalDigest } = await import('@aep/protocol');
  assert.equal(digest.stdout.trim(), approvalDigest('npm test'));
  // The token never reaches the decision log, the state dir or the output.
  for (const p of procs) assert.ok(!p.stderr().includes(TOKEN) && !JSON.stringify(p.lines).includes(TOKEN));
});

test('the decision log holds no token and no free text of any request', () => {
  for (const p of procs) {
    const stateDir = (p as Partial<DelegateProcess>).stateDir;
    if (!stateDir) continue;
    const text = readFileSync(`${stateDir}/decisions.jsonl`, 'utf8');
    assert.ok(!text.includes(TOKEN));
    // The demo agent's prompts and labels ("rm -rf ./build", "Bucket name", "Allow") never appear.
    for (const planted of ['rm -rf', 'Bucket name', 'nightly backup', '"Allow"', 'Retention']) assert.ok(!text.includes(planted), planted);
  }
});
