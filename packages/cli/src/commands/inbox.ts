import type { Command } from 'commander';
import { Option } from 'commander';
import type { PendingAttention } from '@aep/client';
import { action } from '../util/errors.js';
import { addRelayOptions, clean, mapClientError, positiveInt, relayUrl } from './respond.js';

interface InboxOpts {
  relay?: string;
  token?: string;
  agent?: string;
  session?: string;
  capture?: 'none' | 'metadata' | 'redacted' | 'full';
  json?: boolean;
  timeout: string;
}

/** `aep inbox`: pending attention requests across agents and sessions, oldest first. */
export function register(program: Command): void {
  const cmd = program
    .command('inbox')
    .description('list pending attention requests across all agents and sessions, oldest first, with provenance')
    .option('--agent <name>', 'only requests of this agent')
    .option('--session <id>', 'only requests of this session')
    .addOption(new Option('--capture <level>', 'read at this capture ceiling (default: as stored)').choices(['none', 'metadata', 'redacted', 'full']))
    .option('--json', 'one JSON object per pending request (the request event plus provenance)')
    .option('--timeout <ms>', 'bound on reading the relay', '15000')
    .addHelpText('after', `
Reads the relay's replay once (SSE, from=all, live=0, filter type=attention.*) and folds the
lifecycle: a request is pending until its attention.resolved or attention.timeout. Bounded by
what the relay still holds. Answer with "aep answer ID" (interactive) or "aep respond ID …".
Exit codes: 0 ok, 2 usage, 5 relay unreachable.`);
  addRelayOptions(cmd).action(action(async (opts: InboxOpts) => {
    const url = relayUrl(opts.relay);
    const timeoutMs = positiveInt('--timeout', opts.timeout);
    const { listPending } = await import('@aep/client');
    let pending: PendingAttention[];
    try {
      pending = await listPending({
        url, ...(opts.token ? { token: opts.token } : {}), ...(opts.capture ? { ceiling: opts.capture } : {}), timeoutMs,
        filter: { ...(opts.agent ? { agent: opts.agent } : {}), ...(opts.session ? { session: opts.session } : {}) },
      });
    } catch (err) {
      mapClientError(err);
    }
    if (opts.json) {
      for (const p of pending) {
        process.stdout.write(JSON.stringify({ id: p.id, agent: p.agent, session: p.session, source: p.source, time: p.time, capture: p.capture, answered: p.answered, kind: p.data['kind'], event: p.event }) + '\n');
      }
      return;
    }
    if (pending.length === 0) {
      process.stdout.write('no pending attention requests\n');
      return;
    }
    process.stdout.write(`${pending.length} pending attention request${pending.length === 1 ? '' : 's'} (oldest first)\n`);
    for (const p of pending) process.stdout.write(formatPending(p) + '\n');
  }));
}

/** Human-readable block: provenance line (trusted structure), then the agent-authored prompt (marked). */
export function formatPending(p: PendingAttention, now = Date.now()): string {
  const kind = typeof p.data['kind'] === 'string' ? p.data['kind'] : '?';
  const age = ago(now - Date.parse(p.time));
  const fields = Array.isArray(p.data['fields']) ? ` · ${p.data['fields'].length} fields` : '';
  const options = Array.isArray(p.data['options'])
    ? ` · options: ${(p.data['options'] as { id?: unknown }[]).map((o) => clean(o.id)).join('/')}`
    : '';
  const lines = [
    `● ${p.id}  ${kind}${fields}${options}${p.answered ? ' · answered, not yet resolved' : ''}`,
    `  from ${clean(p.agent)} · session ${clean(p.session)} · ${age} · capture ${clean(p.capture)}`,
  ];
  if (typeof p.data['prompt'] === 'string') lines.push(`  │ ${clean(p.data['prompt']).slice(0, 200)}`);
  return lines.join('\n');
}

function ago(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return 'just now';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ago` : `${Math.floor(h / 24)}d ago`;
}
