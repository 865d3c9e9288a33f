#!/usr/bin/env node
// The command-hook shim (`aep-claude-hook`, what `aep claude-code install` configures): reads
// the hook JSON on stdin, hands it to the daemon over its Unix socket and prints the daemon's
// answer. Before sending anything it checks that the socket and its directory belong to this
// user and are closed to group and other, and that the listener proves it holds the per-install
// secret (channel.ts); the answer must carry the MAC of this exchange. It must start fast
// (`node:` built-ins only, no workspace imports) and never break the agent (docs/conventions.md §9): on ANY
// failure it exits 0 with no output, which Claude Code reads as "no decision", after one line on
// stderr naming the code when the channel failed a check.
//
//   aep-claude-hook --socket PATH --secret-file PATH [--timeout-ms 600000]
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { dirname } from 'node:path';
import { CHANNEL_VERSION, FrameReader, answerMac, daemonProof, isNonce, nonce, sameMac, shimProof } from './channel.js';
import { ADAPTER_ERRORS } from './errors.js';
import { privatePathProblem } from './private-path.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function quit(out?: string): never {
  if (out) process.stdout.write(out);
  process.exit(0);
}

/** One diagnostic line (never hook content, never the secret), then no decision. */
function refuse(code: string, why: string): never {
  process.stderr.write(`aep-claude-hook: ${code}: ${why}; no decision (Claude Code asks in its own dialog)\n`);
  return quit();
}

function readStdin(): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('error', () => quit());
    process.stdin.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

async function main(): Promise<void> {
  const socketPath = arg('--socket');
  const secretFile = arg('--secret-file');
  const timeoutMs = Number(arg('--timeout-ms') ?? 600_000);
  // Bound everything: an unreachable or stuck daemon must not hold the agent.
  setTimeout(() => quit(), Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 600_000).unref();
  if (!socketPath || !secretFile)
    return refuse(ADAPTER_ERRORS.SOCKET_UNSAFE, 'usage: aep-claude-hook --socket PATH --secret-file PATH (re-run aep claude-code install)');
  const body = await readStdin();
  const secretProblem = privatePathProblem(secretFile, 'file');
  if (secretProblem) return refuse(ADAPTER_ERRORS.SECRET_UNSAFE, `hook secret: ${secretProblem}`);
  let secret: string;
  try {
    secret = readFileSync(secretFile, 'utf8').trim();
  } catch {
    return quit();
  }
  // Nothing is sent to a socket another user could have planted or could read.
  const problem = privatePathProblem(dirname(socketPath), 'dir') ?? privatePathProblem(socketPath, 'socket');
  if (problem) {
    // No daemon running is the common case, not an attack: stay quiet about a missing socket.
    if (/cannot be read \(ENOENT\)/.test(problem)) return quit();
    return refuse(ADAPTER_ERRORS.SOCKET_UNSAFE, problem);
  }
  const sock = createConnection(socketPath);
  const reader = new FrameReader();
  sock.on('data', (c: Buffer) => reader.push(c));
  sock.on('error', () => reader.end());
  sock.on('close', () => reader.end());
  // The daemon is local: connecting and proving itself must be quick.
  const handshake = setTimeout(() => sock.destroy(), 2_000);
  const ns = nonce();
  sock.write(`${JSON.stringify({ 'aep-cc': CHANNEL_VERSION, nonce: ns })}\n`);
  let nd: string;
  try {
    const hello = await reader.line();
    const n = hello['nonce'];
    if (!isNonce(n) || !sameMac(hello['proof'], daemonProof(secret, ns, n))) {
      sock.destroy();
      return refuse(ADAPTER_ERRORS.DAEMON_UNVERIFIED, `the listener on ${socketPath} could not prove it holds the hook secret; nothing was sent`);
    }
    nd = n;
  } catch {
    sock.destroy();
    return quit();
  }
  clearTimeout(handshake);
  sock.write(`${JSON.stringify({ proof: shimProof(secret, ns, nd), length: body.length })}\n`);
  sock.write(body);
  try {
    const head = await reader.line();
    const length = head['length'];
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0 || length > 16 * 1024 * 1024) return quit();
    const text = (await reader.bytes(length)).toString('utf8');
    if (!sameMac(head['mac'], answerMac(secret, ns, nd, text)))
      return refuse(ADAPTER_ERRORS.DAEMON_UNVERIFIED, 'the answer does not carry the MAC of this exchange; ignored');
    const out = text.trim();
    // `{}` is the daemon's "no decision": print nothing.
    return quit(out === '' || out === '{}' ? undefined : `${out}\n`);
  } catch {
    return quit();
  }
}

main().catch(() => quit());
