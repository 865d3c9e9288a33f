import type { Command } from 'commander';
import { Option } from 'commander';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ResumePosition } from '@aep/client';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addRelayOptions, mapClientError, positiveInt, relayUrl } from '../util/relay.js';

interface TailOpts {
  relay?: string;
  token?: string;
  type?: string[];
  session?: string[];
  agent?: string[];
  severity?: string;
  filter?: string;
  capture?: 'none' | 'metadata' | 'redacted' | 'full';
  json?: boolean;
  transport: 'sse' | 'ws';
  resume: boolean;
  fromStart?: boolean;
  stateDir?: string;
  count?: string;
  connectTimeout: string;
}

const collect = (v: string, prev: string[] = []) => [
  ...prev,
  ...v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

/** `aep tail`: follow the relay's event stream. */
export function register(program: Command): void {
  const cmd = program
    .command('tail')
    .description('follow the live event stream, readable (or --json), with filters and resume between runs')
    .option('--type <types>', 'event types, comma separated or repeated; prefix patterns like attention.* allowed', collect)
    .option('--session <ids>', 'session ids (comma separated or repeated)', collect)
    .option('--agent <names>', 'agent names (comma separated or repeated)', collect)
    .addOption(new Option('--severity <level>', 'minimum severity').choices(['debug', 'info', 'notice', 'warning', 'error', 'critical']))
    .option('--filter <json>', 'an attr-match filter object (AEP-0003 §6), merged with the flags above (flags win)')
    .addOption(new Option('--capture <level>', 'capture ceiling of the subscription (default: as stored)').choices(['none', 'metadata', 'redacted', 'full']))
    .option('--json', 'print each event as its raw JSON line')
    .addOption(new Option('--transport <t>', 'binding used to subscribe').choices(['sse', 'ws']).default('sse'))
    .option('--no-resume', 'do not resume from (nor save) the last position of a previous run')
    .option('--from-start', 'replay everything the relay holds first (from=all)')
    .addOption(new Option('--state-dir <dir>', 'where resume positions are kept').env('AEP_STATE_DIR').default(join(homedir(), '.aep', 'tail')))
    .option('--count <n>', 'exit after printing N events (useful in scripts)')
    .option('--connect-timeout <ms>', 'give up (exit 5) when the first connection does not succeed in time', '10000')
    .addHelpText(
      'after',
      `
Resume: positions are kept per relay URL + filter in the state dir; the next run with the same
filter replays what it missed (from=all, skipping every position already printed) then
follows live. Events are deduplicated on (source, id). Ctrl-C stops.
Exit codes: 0 ok, 2 usage (bad filter), 3 token refused (AEP_CLI_RELAY_REFUSED), 5 relay unreachable.`,
    );
  addRelayOptions(cmd).action(
    action(async (opts: TailOpts) => {
      const url = relayUrl(opts.relay);
      const filter = buildFilter(opts);
      const connectTimeout = positiveInt('--connect-timeout', opts.connectTimeout);
      let count: number | undefined;
      if (opts.count !== undefined) {
        count = Number(opts.count);
        if (!Number.isSafeInteger(count) || count <= 0)
          throw new CliError('AEP_CLI_BAD_OPTION', `--count must be a positive integer, got "${opts.count}"`, EXIT.USAGE);
      }
      const { compileFilter } = await import('@aep/protocol');
      const compiled = compileFilter(filter);
      if (!compiled.ok) {
        throw new CliError('AEP_CLI_BAD_FILTER', `invalid filter: ${compiled.issues.map((i) => `${i.rule}: ${i.message}`).join('; ')}`, EXIT.USAGE);
      }
      const stateFile = join(
        opts.stateDir ?? join(homedir(), '.aep', 'tail'),
        `${createHash('sha256')
          .update(`${new URL(url).origin}\n${JSON.stringify(filter)}\n${opts.capture ?? ''}`)
          .digest('hex')
          .slice(0, 16)}.json`,
      );
      const saved = opts.resume ? loadPositions(stateFile) : new Map<string, ResumePosition>();
      const [{ subscribe }, { formatEvent, oneLine }] = await Promise.all([import('@aep/client/node'), import('../util/render.js')]);
      const ac = new AbortController();
      let printed = 0;
      let dirty = false;
      const save = () => {
        if (!opts.resume || !dirty) return;
        dirty = false;
        try {
          savePositions(stateFile, saved);
        } catch (err) {
          process.stderr.write(`aep tail: cannot save resume state: ${(err as Error).message}\n`);
        }
      };
      const saver = setInterval(save, 1_000);
      let stopped = false;
      const stop = () => {
        stopped = true;
        ac.abort();
      };
      // A closed pipe (`aep tail | head`) ends the tail quietly instead of crashing.
      process.stdout.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'EPIPE') stop();
      });
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      const from = opts.fromStart || saved.size > 0 ? ('all' as const) : undefined;
      const sub = subscribe(
        {
          url,
          ...(opts.token ? { token: opts.token } : {}),
          filter,
          ...(opts.capture ? { ceiling: opts.capture } : {}),
          ...(from ? { from } : {}),
          transport: opts.transport,
          signal: ac.signal,
          reconnect: { maxAttempts: 20 },
          onReplayExhausted: (s, e) =>
            process.stderr.write(`aep tail: the relay no longer holds part of session ${oneLine(s)} (earliest ${e.epoch}:${e.seq})\n`),
          onError: (err) => {
            if (process.env['AEP_DEBUG'] === '1') process.stderr.write(`aep tail: ${err.message}\n`);
          },
        },
        (e, raw) => {
          // After --count is reached, events of the same batch are neither printed nor remembered as
          // printed (the next run must show them).
          if (ac.signal.aborted) return;
          if (typeof e.session === 'string' && typeof e.seq === 'number') {
            const epoch = e.epoch ?? 0;
            const prev = saved.get(e.session);
            if (prev && (epoch < prev.epoch || (epoch === prev.epoch && e.seq <= prev.seq))) return; // printed by an earlier run
            saved.set(e.session, { session: e.session, epoch, seq: e.seq });
            dirty = true;
          }
          process.stdout.write((opts.json ? raw : formatEvent(e)) + '\n');
          printed++;
          if (count !== undefined && printed >= count) ac.abort();
        },
      );
      // The first connection must succeed within --connect-timeout (exit 5 otherwise); later drops reconnect.
      let connected = false;
      sub.ready.then(
        () => {
          connected = true;
        },
        () => {},
      );
      const readyTimer = setTimeout(() => {
        if (!connected) ac.abort();
      }, connectTimeout);
      try {
        await sub.done;
        if (!connected && !stopped) throw new CliError('AEP_CLI_RELAY_UNREACHABLE', `cannot reach the relay at ${new URL(url).origin}`);
      } catch (err) {
        mapClientError(err, url);
      } finally {
        clearTimeout(readyTimer);
        clearInterval(saver);
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        save();
      }
    }),
  );
}

function buildFilter(opts: TailOpts): Record<string, unknown> {
  let base: Record<string, unknown> = {};
  if (opts.filter !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(opts.filter);
    } catch (err) {
      throw new CliError('AEP_CLI_BAD_FILTER', `--filter is not valid JSON: ${(err as Error).message}`, EXIT.USAGE);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new CliError('AEP_CLI_BAD_FILTER', '--filter must be a JSON object (AEP-0003 §6.1)', EXIT.USAGE);
    base = parsed as Record<string, unknown>;
  }
  const one = (v: string[]) => (v.length === 1 ? v[0] : v);
  if (opts.type?.length) base['type'] = one(opts.type);
  if (opts.session?.length) base['session'] = one(opts.session);
  if (opts.agent?.length) base['agent'] = one(opts.agent);
  if (opts.severity) base['severity'] = { gte: opts.severity };
  return base;
}

function loadPositions(file: string): Map<string, ResumePosition> {
  const m = new Map<string, ResumePosition>();
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as { positions?: unknown };
    if (Array.isArray(parsed.positions)) {
      for (const p of parsed.positions as Record<string, unknown>[]) {
        if (typeof p['session'] === 'string' && Number.isSafeInteger(p['epoch']) && Number.isSafeInteger(p['seq'])) {
          m.set(p['session'], { session: p['session'], epoch: p['epoch'] as number, seq: p['seq'] as number });
        }
      }
    }
  } catch {
    // No state yet (or unreadable): start live.
  }
  return m;
}

function savePositions(file: string, m: Map<string, ResumePosition>): void {
  mkdirSync(join(file, '..'), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ positions: [...m.values()] }) + '\n');
  renameSync(tmp, file);
}
