// `aep up` end to end, as a newcomer runs it (issue 14 items 1, 2; issue 11 item 4): a fresh data
// directory, `aep up --demo`, Ctrl+C (SIGINT to the whole process group, as a terminal sends it),
// restart: no request is left pending and the demo's session ended; a second start on the same
// store says which instance runs; the demo child never sees the token on its command line or in
// its environment; every hint the banner and the demo print runs as printed.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, runAep, spawnAep } from '../../../test/support/cli.js';

const dirs: string[] = [];
const procs: ChildProcess[] = [];
after(() => {
  for (const p of procs)
    if (p.exitCode === null && p.signalCode === null && p.pid) {
      try {
        process.kill(-p.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-up-test-'));
  dirs.push(d);
  return d;
}

/** The environment of a newcomer: no token anywhere, data under `dataDir`. */
function newcomerEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: dataDir, ...extra };
  if (extra['AEP_TOKEN'] === undefined) delete env['AEP_TOKEN'];
  delete env['AEP_RELAY'];
  return env;
}

interface Up {
  child: ChildProcess;
  url: string;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

/** Starts `aep up` in its own process group (like a shell job) and waits for the banner (and `until`). */
async function startUp(args: string[], env: NodeJS.ProcessEnv, until?: RegExp): Promise<Up> {
  const child = spawnAep(['up', '--port', '0', '--no-open', ...args], { env, detached: true });
  procs.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (b: Buffer) => {
    out += b.toString('utf8');
  });
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const start = Date.now();
  for (;;) {
    const m = /AEP relay listening on (http:\/\/\S+)/.exec(out);
    if (m && (!until || until.test(out))) return { child, url: m[1]!, out: () => out, err: () => err, exited };
    if (child.exitCode !== null) throw new Error(`aep up exited early (${child.exitCode}): ${out}\n${err}`);
    if (Date.now() - start > 30_000) throw new Error(`aep up did not start: ${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Ctrl+C in a terminal: SIGINT to every process of the foreground group. */
async function interrupt(up: Up): Promise<number | null> {
  process.kill(-(up.child.pid ?? 0), 'SIGINT');
  let t: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    up.exited,
    new Promise<'timeout'>((r) => {
      t = setTimeout(() => r('timeout'), 30_000);
    }),
  ]);
  clearTimeout(t);
  if (code === 'timeout') throw new Error(`aep up did not stop: ${up.out()}\n${up.err()}`);
  return code;
}

/** Pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

test(
  'aep up --demo: the token reaches the demo child through a descriptor, never its command line or environment',
  { skip: process.platform !== 'linux' && 'needs /proc' },
  async () => {
    const data = freshDir();
    const token = 'tok-on-fd-0123456789abcdef';
    // The person exported AEP_TOKEN: aep up may use it, its child must not inherit it.
    const up = await startUp(['--demo', '--memory'], newcomerEnv(data, { AEP_TOKEN: token }), /demo: \{"event":"requested"/);
    const kids = childrenOf(up.child.pid ?? 0);
    assert.equal(kids.length, 1, `one demo child, got ${kids.join(',')}`);
    const cmdline = readFileSync(`/proc/${kids[0]}/cmdline`, 'utf8').split('\0');
    const environ = readFileSync(`/proc/${kids[0]}/environ`, 'utf8').split('\0');
    assert.ok(cmdline.includes('--token-fd'), cmdline.join(' '));
    assert.ok(!cmdline.some((a) => a.includes(token)), 'token on the command line');
    assert.ok(!environ.some((v) => v.includes(token)), 'token in the environment');
    assert.ok(!environ.some((v) => v.startsWith('AEP_TOKEN=')), 'AEP_TOKEN in the environment');
    // And it did authenticate with it: the relay (which needs the token) routed its hello.
    assert.match(up.out(), /demo: \{"event":"ready"/);
    assert.equal(await interrupt(up), 0);
  },
);

test('newcomer path: fresh data dir, aep up --demo, Ctrl+C, restart: nothing left pending; a second start names the running one', async () => {
  const data = freshDir();
  const env = newcomerEnv(data);
  const sessions: string[] = [];
  for (let round = 0; round < 3; round++) {
    const up = await startUp(['--demo'], env, /demo: \{"event":"requested","kind":"form"/);
    sessions.push(/"event":"ready","session":"([^"]+)"/.exec(up.out())?.[1] ?? '');
    // The banner's hints run as printed from this clone.
    assert.match(up.out(), /Run the demo agent: +npx aep demo agent --relay http:\/\/127\.0\.0\.1:\d+ --token-file \S+\/aep\/token\n/);
    if (round === 0) {
      // One instance per store, said plainly (contract C6).
      const second = await runAep(['up', '--port', '0', '--no-open'], undefined, { env, timeoutMs: 60_000 });
      assert.equal(second.code, 5, second.stderr);
      const lines = second.stderr.trim().split('\n');
      assert.equal(lines.length, 1, second.stderr);
      assert.match(
        lines[0]!,
        /^aep: AEP_CLI_RELAY_START_FAILED: the store \S+\/aep\/relay\.sqlite is in use: another relay is running on it.*Use that one \(its inbox, or stop it with Ctrl\+C\), or start this one on another store: npx aep up --store PATH, or npx aep up --memory$/,
      );
      if (/\(pid /.test(lines[0]!)) {
        assert.match(lines[0]!, new RegExp(`\\(pid ${up.child.pid}, ${up.url.replace(/[.]/g, '\\.')}`));
      }
      // The same port: the message says an AEP relay already answers there.
      const port = new URL(up.url).port;
      const busy = await runAep(['up', '--memory', '--port', port, '--no-open'], undefined, { env, timeoutMs: 60_000 });
      assert.equal(busy.code, 5, busy.stderr);
      assert.match(
        busy.stderr,
        new RegExp(
          `^aep: AEP_CLI_LISTEN_FAILED: cannot listen on 127\\.0\\.0\\.1:${port} \\(EADDRINUSE: the port is in use\\); an AEP relay already answers at http://127\\.0\\.0\\.1:${port}/ \\(another aep up\\?\\): pick another with --port, or 0 for any free port \\(npx aep up --port 0\\)\\n$`,
        ),
      );
    }
    assert.equal(await interrupt(up), 0, up.err());
    assert.match(up.out(), /demo: exited \(130\)/);
  }
  const up = await startUp([], env);
  try {
    const tokenFile = join(data, 'aep', 'token');
    const inbox = await runAep(['inbox', '--relay', up.url, '--token-file', tokenFile], undefined, { env, timeoutMs: 60_000 });
    assert.equal(inbox.code, 0, inbox.stderr);
    assert.equal(inbox.stdout, 'no pending attention requests\n');
    for (const s of sessions) {
      const tail = await runAep(
        ['tail', '--relay', up.url, '--token-file', tokenFile, '--session', s, '--from-start', '--no-resume', '--json', '--count', '6'],
        undefined,
        { env, timeoutMs: 60_000 },
      );
      assert.equal(tail.code, 0, tail.stderr);
      const evs = tail.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; data?: Record<string, unknown> });
      assert.deepEqual(
        evs.map((e) => e.type),
        ['session.started', 'run.started', 'attention.requested', 'attention.resolved', 'run.cancelled', 'session.ended'],
        s,
      );
      assert.equal(evs[3]?.data?.['resolution'], 'dismissed');
      assert.equal(evs[5]?.data?.['reason'], 'killed');
    }
  } finally {
    assert.equal(await interrupt(up), 0);
  }
});

test(
  'a store path that cannot exist (/proc/nonexistent) fails at once with the documented code, never spinning',
  { skip: process.platform !== 'linux' && 'needs /proc' },
  async () => {
    const env = newcomerEnv(freshDir());
    const r = await runAep(['up', '--store', '/proc/nonexistent/x.sqlite', '--port', '0', '--no-open'], undefined, { env, timeoutMs: 20_000 });
    assert.equal(r.code, 5, r.stderr);
    assert.match(r.stderr, /^aep: AEP_CLI_RELAY_START_FAILED: .*\/proc\/nonexistent/m);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  },
);

// Every printed hint runs as printed (issue 14 item 2): the commands the banner and the demo
// agent print, run verbatim through a shell, from a clone (`npx aep …`) and from a global install
// (an `aep` on PATH that is this executable: `aep …`).
/** Runs one printed line through `sh -c`, exactly as a person pastes it. */
function shell(line: string, e: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', line], { env: e, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

/** The banner's hint after `label`, and the demo's "answer with:" / "read it with:" hints. */
function hints(out: string, err: string): { inbox: string; demo: string; serve: string; answer: string } {
  const after = (label: string) => new RegExp(`^ {2}${label}: +(.+)$`, 'm').exec(out)?.[1]?.trim() ?? '';
  const answer = /form requested: \S+ \(answer with: (.+)\)$/m.exec(err)?.[1] ?? '';
  return {
    inbox: after('Pending requests'),
    demo: after('Run the demo agent'),
    serve: /^ {20,}(\S.* claude-code serve .+)$/m.exec(out)?.[1]?.trim() ?? '',
    answer,
  };
}

async function checkHints(prefix: string, e: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  const up = await startUp(['--demo', '--memory'], e, /Press Ctrl\+C/);
  for (let i = 0; i < 600 && !/form requested: .*\)\n/.test(up.err()); i++) await new Promise((r) => setTimeout(r, 50));
  try {
    const h = hints(up.out(), up.err());
    for (const [name, line] of Object.entries(h)) assert.ok(line.startsWith(`${prefix} `), `${name} hint starts with "${prefix}": ${line}\n${up.out()}`);
    // The banner's inbox hint lists the demo's form.
    const inbox = await shell(h.inbox, e, cwd);
    assert.equal(inbox.code, 0, `${h.inbox}\n${inbox.stderr}`);
    assert.match(inbox.stdout, /pending attention request/);
    const id = /answer \S+/.exec(h.answer)?.[0].slice(7) ?? '';
    assert.ok(inbox.stdout.includes(id), `the inbox lists the demo's form ${id}`);
    // The serve hint names a token source that works: its --help runs and the file it reads exists.
    const serve = await shell(`${h.serve} --help`, e, cwd);
    assert.equal(serve.code, 0, serve.stderr);
    // The demo's answer hint reaches the relay with the right token (no terminal here, so it is
    // run with --decline appended: the hint's own relay and token arguments do the rest).
    const answer = await shell(`${h.answer} --decline`, e, cwd);
    assert.equal(answer.code, 0, `${h.answer} --decline\n${answer.stdout}\n${answer.stderr}`);
    assert.match(answer.stdout, /accepted \(command /);
  } finally {
    assert.equal(await interrupt(up), 0);
  }
}

test('from a clone: the banner and demo hints read "npx aep …" and run as printed', async () => {
  await checkHints('npx aep', newcomerEnv(freshDir()), repoRoot);
});

test('from a global install: the hints read "aep …" and run as printed', async () => {
  const g = freshDir();
  mkdirSync(join(g, 'bin'));
  symlinkSync(join(repoRoot, 'packages', 'cli', 'bin', 'aep.js'), join(g, 'bin', 'aep'));
  const path = [join(g, 'bin'), ...(process.env['PATH'] ?? '').split(':').filter((d) => !/node_modules[\\/]\.bin/.test(d))].join(':');
  await checkHints('aep', newcomerEnv(freshDir(), { PATH: path }), g);
});
