// The CLI runs the §9.4 pipeline before it claims `redacted`, and labels values by what they are
// (issue 12 item 1): an `sk-proj-…` key typed into a form or a reason is sent at `full` (the agent
// needs the exact value; readers below `full` get the command down-levelled), text the pipeline
// leaves alone at `redacted`, structural values at `metadata`; `--capture redacted` sends the
// redacted text; `--capture metadata` with free text is refused.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { runAep, spawnDemo, startRelayProcess } from '../../../test/support/cli.js';

const TOKEN = 'test-token-capture';
const KEY = 'sk-proj-4f9aT3kQ8zLmN2pRv7XwYb1cDe5FgHiJkLmNoPq';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
const children: ChildProcess[] = [];

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await relay.stop();
});

const aep = (...args: string[]) => runAep([...args, '--relay', relay.url, '--token', TOKEN], undefined, { timeoutMs: 60_000 });

/** The commands of a session as a reader at `ceiling` receives them. */
async function commands(session: string, ceiling: string, count: number): Promise<Record<string, unknown>[]> {
  const r = await aep(
    'tail',
    '--session',
    session,
    '--type',
    'control.attention.respond',
    '--from-start',
    '--no-resume',
    '--json',
    '--capture',
    ceiling,
    '--count',
    String(count),
  );
  assert.equal(r.code, 0, r.stderr);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

test('form values: a key goes at full and reaches the agent exact; redacted and metadata readers never see it; structural values go at metadata', async () => {
  const d = spawnDemo(relay.url, TOKEN, ['--session', 'cap-form', '--only', 'form']);
  children.push(d.child);
  const id = String((await d.next((l) => l['event'] === 'requested', 'requested'))['id']);

  const structural = await aep('respond', id, '--values', '{"2":30,"3":true,"4":["1","3"],"5":"2"}');
  assert.equal(structural.code, 3, 'field 1 is required: nacked, but labelled by what it carries');
  const plain = await aep('respond', id, '--values', '{"1":"nightly","2":{"nested":"free text"}}');
  assert.equal(plain.code, 3, 'an object for a number field is nacked');
  const secret = await aep('respond', id, '--values', JSON.stringify({ '1': KEY }));
  assert.equal(secret.code, 0, secret.stdout + secret.stderr);
  assert.match(
    secret.stderr,
    /^aep: note: the command carries text the redaction pipeline would change \(\/data\/answer\/values\/1\): sent at capture full, so readers below full never see it\n$/,
  );
  assert.deepEqual((await d.next((l) => l['event'] === 'answered', 'answered'))['values'], { '1': KEY }, 'the agent gets the exact value');

  const full = await commands('cap-form', 'full', 3);
  assert.deepEqual(
    full.map((c) => c['capture'] ?? 'metadata'),
    ['metadata', 'redacted', 'full'],
  );
  for (const ceiling of ['redacted', 'metadata']) {
    const seen = await commands('cap-form', ceiling, 3);
    assert.ok(!JSON.stringify(seen).includes(KEY), `the key reached a ${ceiling} reader`);
  }
  const tail = await aep('tail', '--session', 'cap-form', '--from-start', '--no-resume', '--json', '--capture', 'redacted', '--count', '13');
  assert.ok(!tail.stdout.includes(KEY), 'the key reached a redacted reader of the session');
  assert.match(tail.stdout, /"values":\{"1":"\[REDACTED:secret\]"\}/, 'the agent records it redacted');
  assert.equal(await d.exit(), 0);
});

test('--text: --capture redacted over a key sends the redacted text (labelled redacted); --capture metadata or none with an answer is refused', async () => {
  const d = spawnDemo(relay.url, TOKEN, ['--session', 'cap-text', '--only', 'permission']);
  children.push(d.child);
  const id = String((await d.next((l) => l['event'] === 'requested', 'requested'))['id']);
  const low = await aep('respond', id, '--option', 'deny', '--text', 'no', '--capture', 'metadata');
  assert.equal(low.code, 2);
  assert.match(low.stderr, /^aep: AEP_CLI_CAPTURE_TOO_LOW: --capture metadata cannot carry free text \(\/data\/answer\/text\)/);
  const none = await aep('respond', id, '--option', 'deny', '--capture', 'none');
  assert.equal(none.code, 2);
  const asked = await aep('respond', id, '--option', 'deny', '--text', `use ${KEY} instead`, '--capture', 'redacted');
  assert.equal(asked.code, 0, asked.stdout + asked.stderr);
  assert.match(asked.stderr, /--capture redacted: the redaction pipeline changed \/data\/answer\/text; the target receives the redacted text/);
  const answered = await d.next((l) => l['event'] === 'answered', 'answered');
  assert.equal(answered['text'], 'use [REDACTED:secret] instead');
  const cmds = await commands('cap-text', 'full', 1);
  assert.equal(cmds[0]?.['capture'], 'redacted');
  assert.ok(!JSON.stringify(cmds).includes(KEY));
  assert.equal(await d.exit(), 0);
});

test('a reason the pipeline leaves alone is claimed redacted; one it changes, full (aep cancel)', async () => {
  const d = spawnDemo(relay.url, TOKEN, ['--session', 'cap-cancel', '--only', 'form', '--run', 'r-cap']);
  children.push(d.child);
  await d.next((l) => l['event'] === 'requested', 'requested');
  const r = await aep('cancel', '--session', 'cap-cancel', '--run', 'r-cap', '--reason', `mail ops@example.com about ${KEY}`, '--json');
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal((JSON.parse(r.stdout) as { capture: string }).capture, 'full');
  assert.equal(await d.exit(), 1);
  const seen = await aep('tail', '--session', 'cap-cancel', '--from-start', '--no-resume', '--json', '--capture', 'redacted', '--count', '8');
  assert.ok(!seen.stdout.includes(KEY) && !seen.stdout.includes('ops@example.com'), seen.stdout);
  const plain = await aep('cancel', '--session', 'cap-nobody', '--reason', 'wrong branch', '--json', '--ack-window', '500', '--retries', '0');
  assert.equal((JSON.parse(plain.stdout) as { capture: string; status: string }).capture, 'redacted');
});
