// Issue 18 item 4 from a terminal: `aep answer` (driven through tmux) allows a permission request
// whose complete text it shows, then offers "Always allow this exact input?"; the grant goes to
// the live delegate, which then allows the same command of the demo agent by itself.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { aepArgv, repoRoot } from '../../../test/support/cli.js';
import type { DelegateProcess, JsonProcess, World } from './e2e-support.js';
import { TOKEN, data, ofType, spawnJson, startDelegateProcess, startWorld, stopProcess, waitFor } from './e2e-support.js';

const TMUX = '/usr/bin/tmux';
let w: World;
let d: DelegateProcess;
const procs: JsonProcess[] = [];
const sessions: string[] = [];

before(async () => {
  w = await startWorld();
  d = await startDelegateProcess(w, 'answer', 'version: 1\nrules: []\n');
});
after(async () => {
  for (const s of sessions) {
    try {
      execFileSync(TMUX, ['kill-session', '-t', s], { stdio: 'ignore' });
    } catch {
      /* gone */
    }
  }
  for (const p of procs) await stopProcess(p.child);
  await stopProcess(d?.child);
  await w?.stop();
});

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function terminal(args: string[]) {
  const name = `aep-grant-${process.pid}-${sessions.length}`;
  sessions.push(name);
  const cmd = [process.execPath, ...aepArgv(['answer', ...args])].map(sh).join(' ');
  execFileSync(TMUX, ['new-session', '-d', '-s', name, '-x', '160', '-y', '50', `cd ${sh(repoRoot)} && ${cmd}; echo "EXIT=$?"; sleep 60`], {
    env: process.env,
  });
  const screen = () => execFileSync(TMUX, ['capture-pane', '-p', '-t', name], { encoding: 'utf8' });
  const waitScreen = async (re: RegExp, ms = 30_000) => {
    const start = Date.now();
    for (;;) {
      const text = screen();
      if (re.test(text)) return text;
      if (Date.now() - start > ms) throw new Error(`timed out waiting for ${re} on screen:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const keys = async (...k: string[]) => {
    execFileSync(TMUX, ['send-keys', '-t', name, ...k]);
    await new Promise((r) => setTimeout(r, 150));
  };
  return { waitScreen, keys };
}

function demo(session: string): JsonProcess {
  const p = spawnJson(['demo', 'agent', '--only', 'permission', '--command', 'make deploy', '--session', session, '--relay', w.url, '--token', TOKEN]);
  procs.push(p);
  return p;
}

test(
  'aep answer: Allow, then "Always allow this exact input?" -> a grant the delegate uses next time',
  { skip: !existsSync(TMUX) && 'tmux is not installed' },
  async () => {
    const a = demo('grant-term-1');
    const id = String((await waitFor(() => a.lines.find((l) => l['event'] === 'requested'), 'the request', 30_000, a.stderr))['id']);
    // The delegate has no rule for it: it waits for a person.
    await waitFor(() => ofType(w.events, 'attention.routed', id)[0], 'the delegate to consider it');
    const t = terminal([id, '--relay', w.url, '--token', TOKEN]);
    await t.waitScreen(/Your decision/);
    await t.keys('Enter'); // Allow (the first choice)
    await t.waitScreen(/Reason \(optional\)/);
    await t.keys('Enter');
    await t.waitScreen(/Always allow demo-agent to run Bash with exactly this input\?[\s\S]*No, just this once/);
    await t.keys('Down', 'Enter'); // Yes, for 1 hour
    const screen = await t.waitScreen(/EXIT=\d/);
    assert.match(screen, /granted for 1h: the delegate allows exactly this input until then/);
    assert.match(screen, /EXIT=0/);
    assert.equal((await waitFor(() => a.lines.find((l) => l['event'] === 'answered'), "the person's answer"))['option'], 'allow');
    const granted = await waitFor(() => ofType(w.events, 'x.aep.policy.granted')[0], 'the grant');
    assert.deepEqual([data(granted)['agent'], data(granted)['tool'], data(granted)['request']], ['demo-agent', 'Bash', id]);
    // The same command again, in another session: allowed by the grant, no person involved.
    const b = demo('grant-term-2');
    const idB = String((await waitFor(() => b.lines.find((l) => l['event'] === 'requested'), 'the second request', 30_000, b.stderr))['id']);
    assert.equal((await waitFor(() => b.lines.find((l) => l['event'] === 'answered'), "the delegate's answer", 30_000, b.stderr))['option'], 'allow');
    const res = await waitFor(() => ofType(w.events, 'attention.resolved', idB)[0], 'resolved');
    assert.deepEqual([data(res)['resolution'], (res as unknown as Record<string, unknown>)['policyrule']], ['auto', data(granted)['grant']]);
  },
);
