// Test support: run `aep up` and `aep demo agent` as real subprocesses and read their output.
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webRoot } from '@aep/web';
import { repoRoot, spawnAep } from '../../../../test/support/cli.js';

/** Build the inbox bundle when it is missing (CI builds first; a fresh checkout may not have). */
export function ensureWebBuilt(): void {
  if (existsSync(join(webRoot, 'index.html'))) return;
  const r = spawnSync(process.execPath, [join(repoRoot, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn'], {
    cwd: join(repoRoot, 'packages', 'web'),
    stdio: 'inherit',
    timeout: 120_000,
  });
  if (r.status !== 0) throw new Error('could not build the web inbox');
}

/** Collects a child's stdout as lines; resolves waiters on matching lines. */
export class Lines {
  readonly all: string[] = [];
  private buf = '';
  private waiters: { pred: (l: string) => boolean; resolve: (l: string) => void; reject: (e: Error) => void }[] = [];
  private ended: string | null = null;
  constructor(stream: NodeJS.ReadableStream | null | undefined, child?: ChildProcess) {
    child?.on('exit', (code) => {
      // Let the last chunk of output arrive before failing the waiters.
      setTimeout(() => {
        this.ended = `the process exited (${code})`;
        for (const w of this.waiters) w.reject(new Error(`${this.ended} while waiting; saw:\n${this.all.join('\n')}`));
        this.waiters = [];
      }, 200);
    });
    stream?.on('data', (b: Buffer) => {
      this.buf += b.toString('utf8');
      let i;
      while ((i = this.buf.indexOf('\n')) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        this.all.push(line);
        this.waiters = this.waiters.filter((w) => {
          if (w.pred(line)) {
            w.resolve(line);
            return false;
          }
          return true;
        });
      }
    });
  }
  /** Wait (bounded) for a line matching `pred`, including lines already seen. */
  wait(pred: (l: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
    const have = this.all.find(pred);
    if (have !== undefined) return Promise.resolve(have);
    if (this.ended !== null) return Promise.reject(new Error(`${this.ended} before ${what}; saw:\n${this.all.join('\n')}`));
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; saw:\n${this.all.join('\n')}`)), timeoutMs);
      this.waiters.push({
        pred,
        resolve: (l) => {
          clearTimeout(t);
          resolve(l);
        },
        reject: (e) => {
          clearTimeout(t);
          reject(e);
        },
      });
    });
  }
  /** Wait for a JSON line whose `event` member equals `event` (the demo agent's contract). */
  async json(event: string, timeoutMs?: number): Promise<Record<string, unknown>> {
    const line = await this.wait(
      (l) => {
        try {
          return (JSON.parse(l) as { event?: string }).event === event;
        } catch {
          return false;
        }
      },
      `{"event":"${event}"}`,
      timeoutMs,
    );
    return JSON.parse(line) as Record<string, unknown>;
  }
}

/** Stop a child politely, then firmly; resolves with its exit code. */
export function stopChild(child: ChildProcess, timeoutMs = 5_000): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(child.exitCode);
      return;
    }
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
    child.kill('SIGTERM');
  });
}

/** Wait (bounded) for a child to exit by itself. */
export function exited(child: ChildProcess, timeoutMs = 30_000): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (child.exitCode !== null) {
      resolve(child.exitCode);
      return;
    }
    const t = setTimeout(() => reject(new Error('child did not exit in time')), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

/** Start `aep up` on a free port (memory store unless `args` replaces it) with a throwaway state dir. */
export async function startUp(
  args: string[] = ['--memory'],
  stateHome: string = mkdtempSync(join(tmpdir(), 'aep-up-')),
): Promise<{ url: string; child: ChildProcess; out: Lines; err: Lines; stateHome: string }> {
  const child = spawnAep(['up', '--port', '0', '--no-open', ...args], { env: { ...process.env, XDG_DATA_HOME: stateHome, AEP_TOKEN: '' } });
  const out = new Lines(child.stdout, child);
  const err = new Lines(child.stderr);
  const first = await out.wait((l) => l.startsWith('AEP relay listening on '), 'the listening line', 30_000);
  return { url: first.slice('AEP relay listening on '.length).trim(), child, out, err, stateHome };
}
