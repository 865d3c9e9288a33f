#!/usr/bin/env node
// The command-hook entry (`aep-claude-hook`): for Claude Code setups that use `type:"command"`
// hooks. Reads the hook JSON on stdin, POSTs it to the daemon and prints the daemon's answer.
// It must start fast (node:http only, no workspace imports) and never break the agent
// (style.md §9): on ANY failure it exits 0 with no output, which Claude Code reads as "no decision".
//
//   aep-claude-hook [--url http://127.0.0.1:8377/hook] [--timeout-ms 600000]
import { request } from 'node:http';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function quit(out?: string): void {
  if (out) process.stdout.write(out);
  process.exit(0);
}

function main(): void {
  const url = arg('--url') ?? process.env['AEP_CLAUDE_HOOK_URL'] ?? 'http://127.0.0.1:8377/hook';
  const timeoutMs = Number(arg('--timeout-ms') ?? process.env['AEP_CLAUDE_HOOK_TIMEOUT_MS'] ?? 600_000);
  // Bound everything: an unreachable or stuck daemon must not hold the agent.
  setTimeout(() => quit(), Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 600_000).unref();
  const chunks: Buffer[] = [];
  process.stdin.on('data', (c: Buffer) => chunks.push(c));
  process.stdin.on('error', () => quit());
  process.stdin.on('end', () => {
    let target: URL;
    try { target = new URL(url); } catch { quit(); return; }
    const body = Buffer.concat(chunks);
    const req = request(target, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } }, (res) => {
      const out: Buffer[] = [];
      res.on('data', (c: Buffer) => out.push(c));
      res.on('error', () => quit());
      res.on('end', () => {
        if (res.statusCode !== 200) { quit(); return; }
        const text = Buffer.concat(out).toString('utf8').trim();
        // `{}` is the daemon's "no decision": print nothing.
        quit(text === '' || text === '{}' ? undefined : `${text}\n`);
      });
    });
    req.on('error', () => quit());
    // The connection must be established quickly (the daemon is local).
    const connectTimer = setTimeout(() => req.destroy(), 1_000);
    req.on('socket', (s) => {
      if (!s.connecting) clearTimeout(connectTimer);
      else s.once('connect', () => clearTimeout(connectTimer));
    });
    req.end(body);
  });
}

try { main(); } catch { quit(); }
