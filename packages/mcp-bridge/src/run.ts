// `aep mcp wrap`: start the MCP server as a child process and proxy stdio between it and the host
// (MCP 2025-11-25 "Transports: stdio"). Our stdout is the MCP channel: nothing but forwarded or
// bridge-generated JSON-RPC lines is ever written there; diagnostics go to stderr.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { basename } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { CaptureLevel } from '@aep/protocol';
import { McpBridge, DEFAULT_ELICITATION_TIMEOUT_MS } from './bridge.js';
import { AepSide } from './aep.js';
import { childEnvironment } from './env.js';
import { BridgeError } from './errors.js';

export { BridgeError } from './errors.js';

/** Options of {@link runMcpWrap}. */
export interface McpWrapOptions {
  /** The server command and its arguments. */
  command: string;
  args: readonly string[];
  /** Relay base URL; `null` disables AEP entirely (host or decline only). */
  relay: string | null;
  token?: string;
  /** Agent name; default derived from the server command (`mcp-{name}`). */
  agent?: string;
  /** Session id; default `mcp-{random}`. */
  session?: string;
  /** Capture level of the requests; default `redacted`. */
  capture?: CaptureLevel;
  /** How long a human has to answer through AEP; default 10 minutes. */
  timeoutMs?: number;
  /** How long to wait for the relay at start before proxying without it; default 3 000 ms. */
  connectTimeoutMs?: number;
  /** Most elicitations open through AEP at once; default 64. */
  maxPending?: number;
  /** Host side streams; default process stdin/stdout. */
  hostIn?: Readable;
  hostOut?: Writable;
  /** Diagnostics; default stderr with an `aep mcp:` prefix. */
  log?: (line: string) => void;
  /**
   * Environment the child's environment is derived from; default process.env. AEP credentials are always
   * removed from it ({@link childEnvironment}): every `AEP_*` but `AEP_DEBUG`, and any variable
   * holding the token.
   */
  env?: NodeJS.ProcessEnv;
}

const INTERPRETERS = new Set(['node', 'nodejs', 'python', 'python3', 'npx', 'uvx', 'uv', 'deno', 'bun', 'sh', 'bash', 'tsx', 'pipx']);

/** `mcp-{name}` from the server command: the script/package name for interpreters, else the binary. */
export function defaultAgentName(command: string, args: readonly string[]): string {
  let name = basename(command);
  if (INTERPRETERS.has(name.replace(/\.exe$/, ''))) {
    const target = args.find((a) => !a.startsWith('-') && a !== 'run');
    if (target) name = basename(target);
  }
  name = name
    .replace(/\.(m?js|cjs|ts|py|exe)$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `mcp-${name || 'server'}`;
}

/**
 * Run the proxy until the server exits (or the host closes our stdin and the server then exits).
 * Resolves with the exit code to use (the server's, or 128 + signal number). Rejects with a
 * {@link BridgeError} when the server cannot be started.
 */
export async function runMcpWrap(opts: McpWrapOptions): Promise<number> {
  const log =
    opts.log ??
    ((line: string) => {
      process.stderr.write(`aep mcp: ${line}\n`);
    });
  const hostIn = opts.hostIn ?? process.stdin;
  const hostOut = opts.hostOut ?? process.stdout;
  const session = opts.session ?? `mcp-${randomBytes(6).toString('hex')}`;
  const agent = opts.agent ?? defaultAgentName(opts.command, opts.args);
  const capture = opts.capture ?? 'redacted';
  const timeoutMs = opts.timeoutMs ?? DEFAULT_ELICITATION_TIMEOUT_MS;

  // The server gets its own command line only (never the token) and an environment without AEP
  // credentials (issue 11 item 4; docs/security.md §8).
  const { env, removed } = childEnvironment(opts.env ?? process.env, [opts.token]);
  if (removed.length > 0) log(`not passed to the server: ${removed.join(', ')}`);
  const child = spawn(opts.command, [...opts.args], { stdio: ['pipe', 'pipe', 'inherit'], env });
  const spawned = new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (err) => reject(new BridgeError('AEP_MCP_SPAWN', `cannot start the MCP server "${opts.command}": ${err.message}`)));
  });
  try {
    await spawned;
  } catch (err) {
    throw err instanceof BridgeError ? err : new BridgeError('AEP_MCP_SPAWN', String(err));
  }
  const toServer = child.stdin;
  const fromServer = child.stdout;
  // A closed pipe must never crash the proxy (host gone, server gone).
  toServer.on('error', (err) => log(`server stdin: ${err.message}`));
  hostOut.on('error', (err) => log(`host stdout: ${err.message}`));

  let aepSide: AepSide | undefined;
  const aep =
    opts.relay === null
      ? undefined
      : AepSide.start({
          relay: opts.relay,
          ...(opts.token !== undefined ? { token: opts.token } : {}),
          agent,
          session,
          capture,
          connectTimeoutMs: opts.connectTimeoutMs ?? 3_000,
          log,
        }).then((side) => {
          aepSide = side;
          return side;
        });
  if (opts.relay !== null) log(`agent ${agent}, session ${session}, capture ${capture}, answer window ${timeoutMs} ms`);
  const bridge = new McpBridge({
    toServer,
    toHost: hostOut,
    ...(aep ? { aep } : {}),
    timeoutMs,
    log,
    ...(opts.maxPending !== undefined ? { maxPending: opts.maxPending } : {}),
  });

  // Backpressure: stop reading a side while the other side's pipe is full.
  const pump = (src: Readable, dest: Writable, feed: (b: Buffer) => void, end: () => void): void => {
    src.on('data', (chunk: Buffer) => {
      feed(chunk);
      if (dest.writableNeedDrain) {
        src.pause();
        dest.once('drain', () => src.resume());
      }
    });
    src.on('end', end);
    src.on('error', (err) => log(`read error: ${err.message}`));
  };

  let hostEnded = false;
  pump(
    hostIn,
    toServer,
    (b) => bridge.fromHost(b),
    () => {
      bridge.endHost();
      hostEnded = true;
      // MCP stdio shutdown: close the server's input, then SIGTERM, then SIGKILL if it lingers.
      toServer.end();
      const term = setTimeout(() => {
        if (child.exitCode === null) child.kill('SIGTERM');
      }, 5_000);
      const kill = setTimeout(() => {
        if (child.exitCode === null) child.kill('SIGKILL');
      }, 10_000);
      term.unref();
      kill.unref();
    },
  );
  pump(
    fromServer,
    hostOut,
    (b) => bridge.fromServer(b),
    () => bridge.endServer(),
  );

  const forward = (sig: NodeJS.Signals) => () => {
    log(`${sig}: stopping the server`);
    child.kill(sig);
  };
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);

  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  process.off('SIGINT', onInt);
  process.off('SIGTERM', onTerm);
  // Let the server's last lines through before the bridge stops.
  if (fromServer.readableLength > 0 || !fromServer.readableEnded) {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 1_000);
      fromServer.once('close', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
  bridge.close('the MCP server exited');
  const side = aepSide ?? (await aep?.catch(() => undefined));
  await side?.close();
  if (!hostEnded) hostIn.destroy();
  log(`server exited (${exit.signal ?? exit.code ?? 0})`);
  if (exit.signal) return 128 + (signalNumber(exit.signal) ?? 15);
  return exit.code ?? 0;
}

function signalNumber(sig: NodeJS.Signals): number | undefined {
  const table: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
  return table[sig];
}
