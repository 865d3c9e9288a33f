// Shared by integration tests: how to start the `aep` command as a real subprocess.
// By default the compiled CLI (packages/cli/dist/bin.js, what users run); set
// AEP_CLI_FROM_SOURCE=1 while iterating to run the TypeScript sources through tsx instead.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const distBin = fileURLToPath(new URL('../../packages/cli/dist/bin.js', import.meta.url));
const srcBin = fileURLToPath(new URL('../../packages/cli/src/bin.ts', import.meta.url));

/** argv (after the node executable) that starts `aep` with the given arguments. */
export function aepArgv(args: readonly string[]): string[] {
  const fromSource = process.env['AEP_CLI_FROM_SOURCE'] === '1' || !existsSync(distBin);
  return fromSource
    ? ['--conditions=source', '--import', 'tsx', srcBin, ...args]
    : [distBin, ...args];
}

/** Spawn `aep ...args` as a child process (stdio piped unless overridden). */
export function spawnAep(args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, aepArgv(args), { cwd: repoRoot, stdio: 'pipe', ...opts });
}

export interface RunResult { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }

/** Run `aep ...args` to completion, feeding `input` on stdin. */
export function runAep(args: readonly string[], input?: string | Buffer, opts: SpawnOptions & { timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawnAep(args, opts);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin?.on('error', () => { /* child may exit before reading all input */ });
    if (input !== undefined) child.stdin?.end(input); else child.stdin?.end();
  });
}

/**
 * Start `aep relay` on port 0 (memory store unless args say otherwise) and resolve once it
 * prints its listening line: `AEP relay listening on http://HOST:PORT`.
 */
export async function startRelayProcess(args: readonly string[] = ['--memory']): Promise<{ url: string; child: ChildProcess; stop: () => Promise<void> }> {
  const child = spawnAep(['relay', '--port', '0', ...args]);
  const url = await new Promise<string>((resolve, reject) => {
    let buf = '';
    const onData = (b: Buffer) => {
      buf += b.toString('utf8');
      const m = /AEP relay listening on (http:\/\/\S+)/.exec(buf);
      if (m && m[1]) { child.stdout?.off('data', onData); resolve(m[1]); }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (b: Buffer) => { buf += b.toString('utf8'); });
    const onExit = (code: number | null) => reject(new Error(`relay exited early (${code}): ${buf}`));
    child.on('exit', onExit);
    const timer = setTimeout(() => reject(new Error(`relay did not start in time: ${buf}`)), 30_000);
    // Once started, neither the start timer nor the early-exit listener may keep the test alive.
    const settle = () => { clearTimeout(timer); child.off('exit', onExit); };
    child.stdout?.on('data', function started() { if (/AEP relay listening on/.test(buf)) { settle(); child.stdout?.off('data', started); } });
  });
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
  return { url, child, stop };
}
