import type { Command } from 'commander';
import { Option } from 'commander';
import type * as ClientModule from '@aep/client/node';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';

/** Default relay URL when neither `--relay` nor `AEP_RELAY` is given. */
export const DEFAULT_RELAY = 'http://127.0.0.1:8787';

/** Adds the shared `--relay` / `--token` options (env `AEP_RELAY`, `AEP_TOKEN`). */
export function addRelayOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--relay <url>', 'relay base URL').env('AEP_RELAY').default(DEFAULT_RELAY))
    .addOption(new Option('--token <token>', 'bearer token of the relay (required for commands; never printed)').env('AEP_TOKEN'));
}

/** Validates a relay URL option (http/https only) and returns it. */
export function relayUrl(value: unknown): string {
  const s = typeof value === 'string' ? value : DEFAULT_RELAY;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    throw new CliError('AEP_CLI_BAD_RELAY', `--relay must be an http(s) URL, got "${s.replace(/\?.*$/, '')}"`, EXIT.USAGE);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CliError('AEP_CLI_BAD_RELAY', `--relay must be an http(s) URL, got protocol "${u.protocol}"`, EXIT.USAGE);
  return s;
}

/** Maps SDK errors (`ClientError`) to CLI errors: unreachable relay → exit 5. */
export function mapClientError(err: unknown): never {
  if (err instanceof CliError) throw err;
  const code = typeof (err as { code?: unknown })?.code === 'string' ? (err as { code: string }).code : '';
  const msg = err instanceof Error ? err.message : String(err);
  if (code === 'AEP_CLIENT_UNREACHABLE' || code === 'AEP_CLIENT_CLOSED') throw new CliError('AEP_CLI_RELAY_UNREACHABLE', msg, EXIT.UNAVAILABLE);
  if (code === 'AEP_CLIENT_HTTP') throw new CliError('AEP_CLI_RELAY_REFUSED', msg, EXIT.UNAVAILABLE);
  if (/timed out|did not finish/.test(msg)) throw new CliError('AEP_CLI_RELAY_UNREACHABLE', msg, EXIT.UNAVAILABLE);
  throw err;
}

/** Parses a positive integer option. */
export function positiveInt(name: string, value: unknown): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n <= 0) throw new CliError('AEP_CLI_BAD_OPTION', `${name} must be a positive integer, got "${String(value)}"`, EXIT.USAGE);
  return n;
}

/** Strips terminal control characters from untrusted text before printing it (AEP-0001 §12). */
export function clean(text: unknown): string {
  // eslint-disable-next-line no-control-regex
  return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?');
}

interface RespondOpts {
  relay?: string;
  token?: string;
  values?: string;
  option?: string;
  text?: string;
  session?: string;
  ackWindow?: string;
  retries?: string;
  capture?: string;
  agent?: string;
  json?: boolean;
}

/** `aep respond`: answer a pending attention request (AEP-0004 `control.attention.respond`). */
export function register(program: Command): void {
  const cmd = program
    .command('respond')
    .description('answer a pending attention request with a control.attention.respond command and wait for its ack')
    .argument('<request-id>', 'id of the attention.requested event to answer')
    .option('--values <json>', 'form answer: JSON object mapping field id to value, e.g. \'{"1":"bk","2":30}\'')
    .option('--option <id>', 'choose one of the request options (e.g. allow / deny)')
    .option('--text <text>', 'free-text answer (or the reason, together with --option)')
    .option('--session <id>', 'target session (default: looked up from the relay by request id)')
    .option('--ack-window <ms>', 'how long to wait for the ack per attempt', '10000')
    .option('--retries <n>', 'extra attempts with the identical command after a silent window', '1')
    .addOption(new Option('--capture <level>', 'capture of the command (default redacted when it carries text, else metadata)').choices(['none', 'metadata', 'redacted', 'full']))
    .option('--agent <name>', 'sender identity (agent of the command)', 'aep-cli')
    .option('--json', 'print the result as one JSON object')
    .addHelpText('after', `
Exit codes: 0 accepted, 3 rejected (reason and issues printed; also a relay refusal such as
no-route or unauthorized), 4 no ack within the window, 2 usage / unknown request,
5 relay unreachable.

Examples:
  aep respond 01K0FORMREQ… --values '{"1":"nightly-bk","2":30,"3":true,"4":["1","3"]}'
  aep respond 01K0PERMREQ… --option deny --text "use the staging registry"`);
  addRelayOptions(cmd).action(action(async (requestId: string, opts: RespondOpts) => {
    const url = relayUrl(opts.relay);
    const given = [opts.values !== undefined, opts.option !== undefined || opts.text !== undefined].filter(Boolean).length;
    if (given !== 1) throw new CliError('AEP_CLI_USAGE', 'give exactly one answer: --values JSON, or --option ID and/or --text S', EXIT.USAGE);
    let values: Record<string, unknown> | undefined;
    if (opts.values !== undefined) {
      let parsed: unknown;
      try { parsed = JSON.parse(opts.values); } catch (err) {
        throw new CliError('AEP_CLI_BAD_VALUES', `--values is not valid JSON: ${(err as Error).message}`, EXIT.USAGE);
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new CliError('AEP_CLI_BAD_VALUES', '--values must be a JSON object (field id → value, AEP-0006 §3)', EXIT.USAGE);
      values = parsed as Record<string, unknown>;
    }
    const ackWindowMs = positiveInt('--ack-window', opts.ackWindow);
    const retries = Number(opts.retries);
    if (!Number.isSafeInteger(retries) || retries < 0) throw new CliError('AEP_CLI_BAD_OPTION', `--retries must be a non-negative integer, got "${String(opts.retries)}"`, EXIT.USAGE);
    const result = await sendRespond({
      url, ...(opts.token ? { token: opts.token } : {}), requestId,
      answer: { ...(values ? { values } : {}), ...(opts.option !== undefined ? { option: opts.option } : {}), ...(opts.text !== undefined ? { text: opts.text } : {}) },
      ...(opts.session ? { session: opts.session } : {}),
      ackWindowMs, retries, agent: opts.agent ?? 'aep-cli',
      ...(opts.capture ? { capture: opts.capture as 'none' | 'metadata' | 'redacted' | 'full' } : {}),
    });
    printResult(result, opts.json === true);
    process.exitCode = exitFor(result.status);
  }));
}

/** What `aep respond` and `aep answer` send. */
export interface RespondRequest {
  url: string;
  token?: string;
  requestId: string;
  session?: string;
  answer: { option?: string; text?: string; values?: Record<string, unknown> };
  ackWindowMs?: number;
  retries?: number;
  agent?: string;
  capture?: 'none' | 'metadata' | 'redacted' | 'full';
}

/** The result shape printed by `aep respond` (a subset of the SDK's CommandResult). */
export interface RespondOutcome {
  status: 'accepted' | 'rejected' | 'refused' | 'no-ack';
  reason?: string;
  detail?: string;
  issues?: { rule: string; path: string; message?: string }[];
  command: string;
  session: string;
}

/** Looks the session up (unless given), sends the command, waits for the ack. */
export async function sendRespond(req: RespondRequest): Promise<RespondOutcome> {
  const client = await import('@aep/client/node');
  let session = req.session;
  try {
    if (session === undefined) session = await findSession(client, req.url, req.token, req.requestId);
    const sender = await client.CommandSender.connect({
      url: req.url, ...(req.token ? { token: req.token } : {}), agent: req.agent ?? 'aep-cli',
      ...(req.ackWindowMs ? { ackWindowMs: req.ackWindowMs } : {}), ...(req.retries !== undefined ? { retries: req.retries } : {}),
    });
    try {
      const r = await sender.respond({ session, requestId: req.requestId, answer: req.answer, ...(req.capture ? { capture: req.capture } : {}) });
      return {
        status: r.status, session, command: r.command.id,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
        ...(r.detail !== undefined ? { detail: r.detail } : {}),
        ...(r.issues !== undefined ? { issues: r.issues } : {}),
      };
    } finally {
      await sender.close();
    }
  } catch (err) {
    return mapClientError(err);
  }
}

/** Finds the session of a request by replaying `attention.requested` events (`from=all`, `live=0`). */
export async function findSession(client: typeof ClientModule, url: string, token: string | undefined, requestId: string): Promise<string> {
  let found: string | undefined;
  const sub = client.subscribe({
    url, ...(token ? { token } : {}), filter: { type: 'attention.requested', id: requestId },
    from: 'all', live: false, transport: 'sse', reconnect: { maxAttempts: 0 },
  }, (e) => { if (e.id === requestId && typeof e.session === 'string') found ??= e.session; });
  await sub.done;
  if (found === undefined) {
    throw new CliError('AEP_CLI_UNKNOWN_REQUEST', `no attention request ${clean(requestId)} is held by the relay (check the id, or pass --session)`, EXIT.USAGE);
  }
  return found;
}

/** Exit code for a command status (docs: aep respond --help). */
export function exitFor(status: RespondOutcome['status']): 0 | 3 | 4 {
  if (status === 'accepted') return EXIT.OK;
  if (status === 'no-ack') return EXIT.NO_ACK;
  return EXIT.REJECTED;
}

/** Human or JSON rendering of a respond result (stdout). */
export function printResult(r: RespondOutcome, json: boolean): void {
  if (json) {
    process.stdout.write(JSON.stringify(r) + '\n');
    return;
  }
  const lines: string[] = [];
  if (r.status === 'accepted') lines.push(`accepted (command ${r.command}, session ${clean(r.session)})`);
  else if (r.status === 'rejected') lines.push(`rejected: ${clean(r.reason ?? 'unknown')}${r.detail ? ` (${clean(r.detail)})` : ''}`);
  else if (r.status === 'refused') lines.push(`refused by the relay: ${clean(r.reason ?? 'error')}${r.detail ? ` (${clean(r.detail)})` : ''}`);
  else lines.push(`no ack within the window (command ${r.command}); the target may be gone or busy`);
  for (const i of r.issues ?? []) {
    // Messages usually name their rule already ("form.required-missing: …"): don't repeat it.
    const msg = i.message ? clean(i.message.startsWith(`${i.rule}: `) ? i.message.slice(i.rule.length + 2) : i.message) : '';
    lines.push(`  - ${clean(i.rule)} at ${clean(i.path)}${msg ? `: ${msg}` : ''}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}
