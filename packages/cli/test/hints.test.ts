// Every printed hint runs as printed (issue 14 item 2): the commands `aep up`'s banner and the
// demo agent print are run verbatim through a shell, from a clone (where they read `npx aep …`)
// and from a global install (an `aep` on PATH that is this executable: they read `aep …`).
// Real `aep up` subprocesses, a real shell, real npx.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot, spawnAep } from '../../../test/support/cli.js';

const dirs: string[] = [];
const procs: ChildProcess[] = [];
after(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null && p.pid) { try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ } }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'aep-hints-'));
  dirs.push(d);
  return d;
}

function env(dataDir: string, path: string = process.env['PATH'] ?? ''): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: dataDir, PATH: path };
  delete e['AEP_TOKEN'];
  delete e['AEP_RELAY'];
  delete e['AEP_SELF_COMMAND'];
  delete e['INIT_CWD'];
  return e;
}

/** `aep up --demo` in its own process group; resolves once the demo's form hint is printed. */
async function startUp(e: NodeJS.ProcessEnv, cwd: string): Promise<{ child: ChildProcess; out: () => string; err: () => string }> {
  const child = spawnAep(['up', '--port', '0', '--no-open', '--memory', '--demo'], { env: e, cwd, detached: true });
  procs.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (b: Buffer) => { out += b.toString('utf8'); });
  child.stderr?.on('data', (b: Buffer) => { err += b.toString('utf8'); });
  const start = Date.now();
  while (!/form requested: .*\)\n/.test(err) || !/Press Ctrl\+C/.test(out)) {
    if (child.exitCode !== null) throw new Error(`aep up exited early: ${out}\n${err}`);
    if (Date.now() - start > 60_000) throw new Error(`no demo hint: ${out}\n${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { child, out: () => out, err: () => err };
}

/** Runs one printed line through `sh -c`, exactly as a person pastes it. */
function shell(line: string, e: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', line], { env: e, cwd, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  process.kill(-(child.pid ?? 0), 'SIGINT');
  await exited;
}

/** The banner's hint after `label`, and the demo's "answer with:" / "read it with:" hints. */
function hints(out: string, err: string): { inbox: string; demo: string; serve: string; answer: string } {
  const after = (label: string) => new RegExp(`^ {2}${label}: +(.+)$`, 'm').exec(out)?.[1]?.trim() ?? '';
  const answer = /form requested: \S+ \(answer with: (.+)\)$/m.exec(err)?.[1] ?? '';
  return { inbox: after('Pending requests'), demo: after('Run the demo agent'), serve: /^ {20,}(\S.* claude-code serve .+)$/m.exec(out)?.[1]?.trim() ?? '', answer };
}

async function checkHints(prefix: string, e: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  const up = await startUp(e, cwd);
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
    await stop(up.child);
  }
}

test('from a clone: the banner and demo hints read "npx aep …" and run as printed', async () => {
  await checkHints('npx aep', env(freshDir()), repoRoot);
});

test('from a global install: the hints read "aep …" and run as printed', async () => {
  const g = freshDir();
  mkdirSync(join(g, 'bin'));
  symlinkSync(join(repoRoot, 'packages', 'cli', 'bin', 'aep.js'), join(g, 'bin', 'aep'));
  const path = [join(g, 'bin'), ...(process.env['PATH'] ?? '').split(':').filter((d) => !/node_modules[\\/]\.bin/.test(d))].join(':');
  await checkHints('aep', env(freshDir(), path), g);
});
