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
  return fromSource ? ['--conditions=source', '--import', 'tsx', srcBin, ...args] : [distBin, ...args];
}

/** Spawn `aep ...args` as a child process (stdio piped unless overridden). */
export function spawnAep(args: readonly string[], opts: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, aepArgv(args), { cwd: repoRoot, stdio: 'pipe', ...opts });
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

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
    child.stdin?.on('error', () => {
      /* child may exit before reading all input */
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
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
      if (m && m[1]) {
        child.stdout?.off('data', onData);
        resolve(m[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (b: Buffer) => {
      buf += b.toString('utf8');
    });
    const onExit = (code: number | null) => reject(new Error(`relay exited early (${code}): ${buf}`));
    child.on('exit', onExit);
    const timer = setTimeout(() => reject(new Error(`relay did not start in time: ${buf}`)), 30_000);
    // Once started, neither the start timer nor the early-exit listener may keep the test alive.
    const settle = () => {
      clearTimeout(timer);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', function started() {
      if (/AEP relay listening on/.test(buf)) {
        settle();
        child.stdout?.off('data', started);
      }
    });
  });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
    });
  return { url, child, stop };
}

export type JsonLine = Record<string, unknown>;

/** A running `aep demo agent` with its JSON lines and bounded waits. */
export interface DemoProcess {
  child: ChildProcess;
  lines: JsonLine[];
  /** The first line matching `pred` (waits up to `ms`). */
  next(pred: (l: JsonLine) => boolean, what: string, ms?: number): Promise<JsonLine>;
  /** Exit code (kills the child and throws after `ms`). */
  exit(ms?: number): Promise<number | null>;
  stderr(): string;
}

/** Starts `aep demo agent --relay URL --token T ...args` (stdout parsed as JSON lines). */
export function spawnDemo(url: string, token: string, args: readonly string[], opts: SpawnOptions = {}): DemoProcess {
  const child = spawnAep(['demo', 'agent', '--relay', url, '--token', token, ...args], opts);
  const lines: JsonLine[] = [];
  let buf = '';
  let stderr = '';
  child.stdout?.on('data', (b: Buffer) => {
    buf += b.toString('utf8');
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (l.trim()) lines.push(JSON.parse(l) as JsonLine);
    }
  });
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const next = async (pred: (l: JsonLine) => boolean, what: string, ms = 30_000): Promise<JsonLine> => {
    const start = Date.now();
    for (;;) {
      const l = lines.find(pred);
      if (l) return l;
      if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; stdout=${JSON.stringify(lines)} stderr=${stderr}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const exit = async (ms = 30_000) => {
    let t: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      exited,
      new Promise<'timeout'>((r) => {
        t = setTimeout(() => r('timeout'), ms);
      }),
    ]);
    clearTimeout(t);
    if (code === 'timeout') {
      child.kill('SIGKILL');
      throw new Error(`demo agent did not exit; stderr=${stderr}`);
    }
    return code;
  };
  return { child, lines, next, exit, stderr: () => stderr };
}

/** Parsed `data:` events of an SSE stream, collected while it stays open. */
export interface SseWatch {
  events: JsonLine[];
  /** Texts of every `data:` line, as received. */
  raw: string[];
  ready: Promise<void>;
  waitFor(pred: (events: JsonLine[]) => boolean, what: string, ms?: number): Promise<void>;
  close(): void;
}

/** Opens `GET /stream?filter=…` with the token and collects what it delivers (no SDK involved). */
export function watchStream(url: string, token: string, filter: Record<string, unknown>, extra = ''): SseWatch {
  const ac = new AbortController();
  const events: JsonLine[] = [];
  const raw: string[] = [];
  const ready = (async () => {
    const res = await fetch(`${url}/stream?filter=${encodeURIComponent(JSON.stringify(filter))}${extra}`, {
      headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
      signal: ac.signal,
    });
    if (res.status !== 200 || !res.body) throw new Error(`stream refused: ${res.status}`);
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buf += dec.decode(value, { stream: true });
          let i: number;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const msg = buf.slice(0, i);
            buf = buf.slice(i + 2);
            for (const line of msg.split('\n')) {
              if (!line.startsWith('data:')) continue;
              const text = line.slice(5).trim();
              raw.push(text);
              events.push(JSON.parse(text) as JsonLine);
            }
          }
        }
      } catch {
        /* aborted */
      }
    })();
  })();
  const waitFor = async (pred: (events: JsonLine[]) => boolean, what: string, ms = 30_000) => {
    const start = Date.now();
    for (;;) {
      if (pred(events)) return;
      if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(events.map((e) => e['type']))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  return { events, raw, ready, waitFor, close: () => ac.abort() };
}
