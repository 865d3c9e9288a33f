// Shared by the adapter's integration tests: the real daemon (`aep claude-code serve`, a
// subprocess of the compiled CLI), hooks posted like Claude Code's HTTP handler, a recording
// subscription on the real relay, and commands built with extension attributes.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEmitter } from '@aep/protocol';
import type { CommandSender } from '@aep/client';
import type { CommandResult, WireEvent } from '@aep/client';
import { spawnAep } from '../../../../test/support/cli.js';

export const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../fixtures/hooks/${name}.json`, import.meta.url), 'utf8')) as Record<string, unknown>;

export interface DaemonProcess {
  url: string;
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  secret: string;
  socket: string;
  secretFile: string;
  dir: string;
}

/** A private temporary directory for one daemon's secret and socket (short: socket paths are limited to ~108 bytes). */
export function channelDir(): { dir: string; secretFile: string; socket: string } {
  const dir = mkdtempSync(join(tmpdir(), 'aep-cc-'));
  return { dir, secretFile: join(dir, 'cfg', 'hook-secret'), socket: join(dir, 'run', 'cc.sock') };
}

/**
 * Starts `aep claude-code serve --port 0 ...args` with its secret and socket in a fresh private
 * temporary directory (unless `args` name them); resolves on its listening line.
 */
export async function startDaemonProcess(args: readonly string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<DaemonProcess> {
  const ch = channelDir();
  const secretFile = args.includes('--secret-file') ? args[args.indexOf('--secret-file') + 1]! : ch.secretFile;
  const socket = args.includes('--socket') ? args[args.indexOf('--socket') + 1]! : ch.socket;
  const extra = [...(args.includes('--secret-file') ? [] : ['--secret-file', secretFile]), ...(args.includes('--socket') ? [] : ['--socket', socket])];
  const child = spawnAep(['claude-code', 'serve', '--port', '0', ...extra, ...args], opts.env ? { env: opts.env } : {});
  let err = '';
  let out = '';
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`daemon did not start: ${out} ${err}`)), 30_000);
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString('utf8');
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(t);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`daemon exited (${code}): ${err}`));
    });
  });
  return { url, child, stderr: () => err, stdout: () => out, secret: readFileSync(secretFile, 'utf8').trim(), socket, secretFile, dir: ch.dir };
}

export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

export interface HookReply {
  status: number;
  body: unknown;
  ms: number;
}

/** POSTs one hook like Claude Code's HTTP hook handler and waits (bounded) for the answer. */
export async function hook(daemon: { url: string; secret?: string }, event: string, payload: Record<string, unknown>, timeoutMs = 30_000): Promise<HookReply> {
  const t0 = performance.now();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (daemon.secret !== undefined) headers['authorization'] = `Bearer ${daemon.secret}`;
  const res = await fetch(`${daemon.url}/hooks/${event}`, { method: 'POST', headers, body: JSON.stringify(payload), signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown), ms: performance.now() - t0 };
}

/** Polls `find` until it returns a value (bounded). */
export async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = find();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until the daemon's relay connection is up (its /health says so). */
export async function waitConnected(daemon: { url: string; secret?: string }): Promise<void> {
  const headers: Record<string, string> = {};
  if (daemon.secret !== undefined) headers['authorization'] = `Bearer ${daemon.secret}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const h = (await (await fetch(`${daemon.url}/health`, { headers })).json()) as { connected: boolean };
    if (h.connected) return;
    if (Date.now() > deadline) throw new Error('daemon never connected to the relay');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Sends one `control.attention.respond` with optional extension attributes (e.g. `approvalproof`). */
export async function sendRespond(
  sender: CommandSender,
  request: WireEvent,
  answer: Record<string, unknown>,
  extensions?: Record<string, string>,
  capture: 'metadata' | 'redacted' = 'redacted',
): Promise<CommandResult> {
  const b = createEmitter({ source: 'aep://test/agent/answerer', agent: 'answerer' });
  const cmd = b.build({
    type: 'control.attention.respond',
    session: request.session!,
    subject: request.id,
    cause: request.id,
    capture,
    data: { answer },
    ...(extensions ? { extensions } : {}),
  }) as unknown as WireEvent;
  return sender.send(cmd);
}

/** Sends any prebuilt command (steering: control.cancel / pause / resume). */
export async function sendCommand(
  sender: CommandSender,
  type: string,
  session: string,
  data: Record<string, unknown> | undefined,
  attrs: { run?: string; capture?: 'metadata' | 'redacted' } = {},
): Promise<CommandResult> {
  const b = createEmitter({ source: 'aep://test/agent/steerer', agent: 'steerer' });
  const cmd = b.build({
    type,
    session,
    capture: attrs.capture ?? 'metadata',
    ...(attrs.run !== undefined ? { run: attrs.run } : {}),
    ...(data !== undefined ? { data } : {}),
  }) as unknown as WireEvent;
  return sender.send(cmd);
}

/** Waits until the daemon's stderr matches `re` (log lines arrive after the answers they explain). */
export async function logged(d: { stderr: () => string }, re: RegExp): Promise<void> {
  await waitFor(() => (re.test(d.stderr()) ? true : undefined), `a log line matching ${re}`);
}
