// `aep inbox` and `aep answer` against a real relay (subprocess, port 0) and real emitters
// (issue 14 items 3 and 5): a request whose agent went away is shown "agent offline since …"
// (the relay's C4 roster) and `aep answer` refuses it with AEP_CLI_AGENT_OFFLINE, sending
// nothing; an answered request shows the recorded answer and who answered, from where; every
// form offers decline and cancel (contract C2): `--decline` / `--cancel`, and interactively
// (tmux) before the first field.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { EmitterConnection, subscribe } from '@aep/client/node';
import type { WireEvent } from '@aep/client';
import { aepArgv, repoRoot, runAep, startRelayProcess } from '../../../test/support/cli.js';

const TOKEN = 'test-token-inbox-answer';
const TMUX = '/usr/bin/tmux';
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
const conns: EmitterConnection[] = [];
const tmuxSessions: string[] = [];

before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN, '--quiet']);
});
after(async () => {
  for (const s of tmuxSessions) {
    try {
      execFileSync(TMUX, ['kill-session', '-t', s], { stdio: 'ignore' });
    } catch {
      /* already gone */
    }
  }
  for (const c of conns) await c.close().catch(() => undefined);
  await relay.stop();
});

const FORM = {
  kind: 'form',
  prompt: 'Configure the nightly backup',
  respond_via: ['control'],
  fields: [
    { id: 'bucket', type: 'string', label: 'Bucket name', required: true },
    { id: 'days', type: 'number', label: 'Retention (days)', min: 1, max: 365 },
    {
      id: 'tier',
      type: 'select',
      label: 'Storage class',
      choices: [
        { id: 'std', label: 'Standard' },
        { id: 'arc', label: 'Archive' },
      ],
    },
  ],
};

/** An emitter that records every answer it accepts (`attention.answered`, cause = the command) and, unless `resolve` is false, resolves. */
async function agent(name: string, opts: { resolve?: boolean } = {}) {
  const conn = await EmitterConnection.connect({
    url: relay.url,
    token: TOKEN,
    agent: name,
    capture: 'redacted',
    control: { accepts: ['control.attention.respond'] },
  });
  conns.push(conn);
  const answers: Record<string, unknown>[] = [];
  conn.onCommand('control.attention.respond', ({ event }) => {
    const answer = (event.data as { answer: Record<string, unknown> }).answer;
    answers.push(answer);
    return {
      status: 'accepted',
      after: () => {
        const subject = String(event.subject);
        const session = String(event.session);
        if (answer['option'] === 'cancel') {
          conn.emit(session, 'attention.resolved', { resolution: 'dismissed' }, { subject, cause: event.id });
          return;
        }
        conn.emit(session, 'attention.answered', { answer, via: 'control' }, { subject, cause: event.id, capture: 'redacted' });
        if (opts.resolve !== false)
          conn.emit(session, 'attention.resolved', { resolution: answer['option'] === 'decline' ? 'declined' : 'answered' }, { subject, cause: event.id });
      },
    };
  });
  return { conn, answers };
}

/** Commands the relay holds for a session (replay). */
async function commandsOf(session: string): Promise<WireEvent[]> {
  const out: WireEvent[] = [];
  const sub = subscribe(
    { url: relay.url, token: TOKEN, filter: { session, type: 'control.*' }, from: 'all', live: false, transport: 'sse', reconnect: { maxAttempts: 0 } },
    (e) => {
      out.push(e);
    },
  );
  await sub.done;
  return out;
}

const relayArgs = () => ['--relay', relay.url, '--token', TOKEN];

test('a request whose agent went away: aep inbox says "agent offline since …" with no answer hint; aep answer refuses it (AEP_CLI_AGENT_OFFLINE, exit 3) and sends nothing', async () => {
  const { conn } = await agent('leaver');
  const id = conn.emit('s-offline', 'attention.requested', FORM, { capture: 'redacted', severity: 'notice' }).id;
  await conn.flush(10_000);
  await conn.close();
  // The relay lists it offline once the asker's connection is gone (C4); wait for that.
  let inbox = '';
  for (let i = 0; i < 100 && !/agent offline since/.test(inbox); i++) {
    inbox = (await runAep(['inbox', '--session', 's-offline', ...relayArgs()])).stdout;
    if (!/agent offline since/.test(inbox)) await new Promise((r) => setTimeout(r, 200));
  }
  assert.match(inbox, /1 pending attention request \(oldest first\), 1 of them from an agent that is offline \(not answerable now\)/);
  assert.match(inbox, new RegExp(`● ${id}`));
  assert.match(
    inbox,
    /⚠ agent offline since \d{4}-\d\d-\d\dT[^ ]+ \([^)]*\): the agent that asked \(leaver\) is no longer connected, so this request cannot be answered now/,
  );
  assert.doesNotMatch(inbox, /Answer: {2}/, 'no answer hint for a request that cannot be answered');

  const json = await runAep(['inbox', '--session', 's-offline', '--json', ...relayArgs()]);
  const line = JSON.parse(json.stdout.trim()) as Record<string, unknown>;
  const offline = line['offline'] as Record<string, unknown>;
  assert.equal(offline['agent'], 'leaver');
  assert.ok(Date.parse(String(offline['since'])) <= Date.now());

  const r = await runAep(['answer', id, '--decline', ...relayArgs()]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /AEP_CLI_AGENT_OFFLINE: request \S+ cannot be answered: its agent \(leaver\) has been offline since \S+; nothing was sent/);
  assert.match(r.stdout, /agent offline since/);
  assert.doesNotMatch(r.stderr, /no-route/);
  assert.deepEqual(await commandsOf('s-offline'), [], 'nothing was sent');
  // aep respond (scripted, no roster read first): the relay refuses it (no-route, nothing reaches
  // anyone) and the CLI says why with the same code and exit status.
  const s = await runAep(['respond', id, '--option', 'decline', ...relayArgs()]);
  assert.equal(s.code, 3, s.stderr + s.stdout);
  assert.match(s.stderr, /AEP_CLI_AGENT_OFFLINE: request \S+ cannot be answered: its agent \(leaver\) has been offline since \S+; the relay delivered nothing/);
});

test('an answered request (recorded, not yet resolved) shows the answer and who answered, from where, in aep inbox', async () => {
  const { conn } = await agent('recorder', { resolve: false });
  const id = conn.emit('s-answered', 'attention.requested', FORM, { capture: 'redacted', severity: 'notice' }).id;
  await conn.flush(10_000);
  const sent = await runAep([
    'respond',
    id,
    '--values',
    JSON.stringify({ bucket: 'nightly-bk', days: 30, tier: 'arc' }),
    '--agent',
    'ops-alice',
    ...relayArgs(),
  ]);
  assert.equal(sent.code, 0, sent.stderr + sent.stdout);
  let inbox = '';
  for (let i = 0; i < 100 && !/Answered /.test(inbox); i++) {
    inbox = (await runAep(['inbox', '--session', 's-answered', ...relayArgs()])).stdout;
    if (!/Answered /.test(inbox)) await new Promise((r) => setTimeout(r, 200));
  }
  assert.match(inbox, /answered, not yet resolved/);
  assert.match(
    inbox,
    /Answered \S+ by ops-alice via control \(a command through the relay\), sent from aep:\/\/[^ ]+\/agent\/ops-alice \(the sender's identity is as it states it\):/,
  );
  assert.match(inbox, /bucket "Bucket name" = "nightly-bk"/);
  assert.match(inbox, /days "Retention \(days\)" = 30/);
  assert.match(inbox, /tier "Storage class" = "arc"/);
  const json = JSON.parse((await runAep(['inbox', '--session', 's-answered', '--json', ...relayArgs()])).stdout.trim()) as Record<
    string,
    Record<string, unknown>
  >;
  assert.equal(json['answer']?.['by'], 'ops-alice');
  assert.deepEqual(((json['answer']?.['event'] as WireEvent).data as Record<string, unknown>)['answer'], {
    values: { bucket: 'nightly-bk', days: 30, tier: 'arc' },
  });
  // At capture metadata the free text is withheld, and the inbox says so.
  const meta = (await runAep(['inbox', '--session', 's-answered', '--capture', 'metadata', ...relayArgs()])).stdout;
  assert.match(meta, /bucket "[^"]*" = \(not shown at capture metadata\)/);
  assert.match(meta, /days "[^"]*" = 30/);
});

for (const option of ['decline', 'cancel'] as const) {
  test(`aep answer ID --${option} sends answer.option "${option}" on a form, without a terminal (C2)`, async () => {
    const { conn, answers } = await agent(`refuser-${option}`);
    const id = conn.emit(`s-${option}`, 'attention.requested', FORM, { capture: 'redacted', severity: 'notice' }).id;
    await conn.flush(10_000);
    const r = await runAep(['answer', id, `--${option}`, ...relayArgs()], '');
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /accepted \(command /);
    assert.deepEqual(answers, [{ option }]);
  });
}

test('--decline / --cancel: a usage error with both, without an id, or on a request that is not a form', async () => {
  const both = await runAep(['answer', 'X', '--decline', '--cancel', ...relayArgs()]);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /AEP_CLI_USAGE: give one of --decline and --cancel/);
  const noId = await runAep(['answer', '--cancel', ...relayArgs()]);
  assert.equal(noId.code, 2);
  assert.match(noId.stderr, /--cancel needs the request id/);
  const { conn, answers } = await agent('asker');
  const id = conn.emit(
    's-perm',
    'attention.requested',
    {
      kind: 'review',
      prompt: 'Which?',
      options: [
        { id: 'a', label: 'A' },
        { id: 'b', label: 'B' },
      ],
      respond_via: ['control'],
    },
    { capture: 'redacted' },
  ).id;
  await conn.flush(10_000);
  const r = await runAep(['answer', id, '--decline', ...relayArgs()]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /AEP_CLI_USAGE: --decline answers a form; request \S+ is a review request/);
  assert.deepEqual(answers, []);
});

test(
  'aep answer offers Answer / Decline / Cancel before the first field; Decline reaches the agent',
  { skip: !existsSync(TMUX) && 'tmux is not installed' },
  async () => {
    const { conn, answers } = await agent('tty-refuser');
    const id = conn.emit('s-tty', 'attention.requested', FORM, { capture: 'redacted', severity: 'notice' }).id;
    await conn.flush(10_000);
    const name = `aep-inbox-answer-${process.pid}`;
    tmuxSessions.push(name);
    const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
    const cmd = [process.execPath, ...aepArgv(['answer', id, ...relayArgs()])].map(sh).join(' ');
    execFileSync(TMUX, ['new-session', '-d', '-s', name, '-x', '160', '-y', '50', `cd ${sh(repoRoot)} && ${cmd}; echo "EXIT=$?"; sleep 60`], {
      env: process.env,
    });
    const screen = () => execFileSync(TMUX, ['capture-pane', '-p', '-J', '-t', name], { encoding: 'utf8' });
    const waitFor = async (re: RegExp) => {
      const start = Date.now();
      for (;;) {
        const text = screen();
        if (re.test(text)) return text;
        if (Date.now() - start > 30_000) throw new Error(`timed out waiting for ${re} on screen:\n${text}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await waitFor(/This form[\s\S]*Answer it[\s\S]*Decline: tell the agent you will not answer[\s\S]*Cancel: dismiss it unanswered/);
    execFileSync(TMUX, ['send-keys', '-t', name, 'Down', 'Enter']);
    const done = await waitFor(/EXIT=\d/);
    assert.match(done, /accepted \(command /);
    assert.match(done, /EXIT=0/);
    assert.doesNotMatch(done, /Bucket name \*/, 'no field was asked');
    assert.deepEqual(answers, [{ option: 'decline' }]);
  },
);
