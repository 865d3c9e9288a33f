// End-to-end helpers: a real relay (`aep relay --memory --token T`, port 0), the delegate as a
// real subprocess (`aep delegate --policy FILE --json`), a subscriber that records every event
// as received (the owner token reads at full), and waiting on events rather than on time.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { subscribe } from '@aep/client/node';
import type { Subscription, WireEvent } from '@aep/client';
import { runAep, spawnAep, startRelayProcess } from '../../../test/support/cli.js';

export const TOKEN = 'delegate-e2e-token-7c1d0f2a';

export interface World {
  url: string;
  dir: string;
  tokenFile: string;
  events: WireEvent[];
  stop(): Promise<void>;
}

export async function startWorld(): Promise<World> {
  const relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  const events: WireEvent[] = [];
  const sub: Subscription = subscribe({ url: relay.url, token: TOKEN, from: 'all', transport: 'ws' }, (e) => {
    events.push(e);
  });
  await sub.ready;
  const dir = mkdtempSync(join(tmpdir(), 'aep-delegate-e2e-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
  return {
    url: relay.url,
    dir,
    tokenFile,
    events,
    stop: async () => {
      sub.close();
      await relay.stop();
    },
  };
}

export async function waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 20_000, seen?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = find();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${seen ? `; ${seen()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

/** A process whose stdout is JSON lines; `lines` fills as they arrive. */
export interface JsonProcess {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  stderr(): string;
}

export function spawnJson(args: string[]): JsonProcess {
  const child = spawnAep(args);
  const lines: Record<string, unknown>[] = [];
  let buf = '';
  let err = '';
  child.stdout?.on('data', (b: Buffer) => {
    buf += b.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      try {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        /* not JSON */
      }
    }
  });
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  return { child, lines, stderr: () => err };
}

export interface DelegateProcess extends JsonProcess {
  stateDir: string;
  killSwitch: string;
  decisions(): Record<string, unknown>[];
}

/** Starts `aep delegate` with `policy` (YAML text) and waits for its ready line. */
export async function startDelegateProcess(w: World, name: string, policy: string, extra: string[] = []): Promise<DelegateProcess> {
  const policyFile = join(w.dir, `${name}.yaml`);
  writeFileSync(policyFile, policy);
  const stateDir = join(w.dir, `${name}-state`);
  const p = spawnJson(['delegate', '--policy', policyFile, '--relay', w.url, '--token-file', w.tokenFile, '--state-dir', stateDir, '--json', ...extra]);
  const ready = await waitFor(
    () => p.lines.find((l) => l['event'] === 'ready') ?? (p.child.exitCode !== null ? { exited: p.child.exitCode } : undefined),
    `the delegate ${name} to be ready`,
    30_000,
    p.stderr,
  );
  if ('exited' in ready) throw new Error(`the delegate exited (${String(ready['exited'])}): ${p.stderr()}`);
  return { ...p, stateDir, killSwitch: String(ready['kill_switch']), decisions: () => p.lines.filter((l) => l['event'] === 'decision') };
}

/** `aep delegate …` against the world's relay, the owner token from its file. */
export function aepDelegate(w: World, args: string[], input?: string) {
  return runAep(['delegate', ...args, '--relay', w.url, '--token-file', w.tokenFile], input, { timeoutMs: 60_000 });
}

/** Another `aep …` command against the world's relay with the owner token. */
export function aep(w: World, args: string[], input?: string) {
  return runAep([...args, '--relay', w.url, '--token', TOKEN], input, { timeoutMs: 60_000 });
}

export const ofType = (events: WireEvent[], type: string, subject?: string) =>
  events.filter((e) => e.type === type && (subject === undefined || e.subject === subject));
export const attr = (e: WireEvent | undefined, name: string): unknown => (e as unknown as Record<string, unknown> | undefined)?.[name];
export const data = (e: WireEvent | undefined): Record<string, unknown> => (e?.data ?? {}) as Record<string, unknown>;
