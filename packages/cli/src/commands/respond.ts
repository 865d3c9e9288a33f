import type { Command } from 'commander';
import { Option } from 'commander';
import type { CaptureLevel, FieldSpec } from '@aep/protocol';
import type { WireEvent } from '@aep/client';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addRelayOptions, mapClientError, positiveInt, relayUrl } from '../util/relay.js';
import { selfCommand } from '../util/self.js';

interface RespondOpts {
  relay?: string;
  token?: string;
  values?: string;
  option?: string;
  text?: string;
  digest?: string;
  show?: boolean;
  session?: string;
  ackWindow?: string;
  retries?: string;
  capture?: CaptureLevel;
  agent?: string;
  json?: boolean;
}

/** `aep respond`: answer a pending attention request (AEP-0004 `control.attention.respond`). */
export function register(program: Command): void {
  const cmd = program
    .command('respond')
    .description('answer a pending attention request with a control.attention.respond command and wait for its ack (--show: print it first)')
    .argument('<request-id>', 'id of the attention.requested event to answer')
    .option('--show', 'print the request complete (approval text, options with their effects, fields, approval digest) and how to answer it; sends nothing')
    .option('--values <json>', 'form answer: JSON object mapping field id to value, e.g. \'{"1":"bk","2":30}\'')
    .option('--option <id>', 'choose one of the request options (e.g. allow / deny)')
    .option('--text <text>', 'free-text answer (or the reason, together with --option)')
    .option('--digest <d>', 'to allow a permission request: the approval digest printed under its complete text by --show or aep inbox')
    .option('--session <id>', 'target session (default: looked up from the relay by request id)')
    .option('--ack-window <ms>', 'how long to wait for the ack per attempt', '10000')
    .option('--retries <n>', 'extra attempts with the identical command after a silent window', '1')
    .addOption(
      new Option(
        '--capture <level>',
        'capture of the command (default: metadata without free text; redacted when the text passes the redaction pipeline unchanged; full when the pipeline would change it)',
      ).choices(['none', 'metadata', 'redacted', 'full']),
    )
    .option('--agent <name>', 'sender identity (agent of the command)', 'aep-cli')
    .option('--json', 'print the result (or, with --show, the request) as one JSON object')
    .addHelpText(
      'after',
      `
Allowing a permission request: only what you have read in full can be allowed. Run
"aep respond ID --show": it prints the complete text (every line, invisible characters made
visible) and its approval digest; then "aep respond ID --option allow --digest DIGEST".
Without --digest aep refuses (AEP_CLI_APPROVAL_UNSEEN, exit 2); with a digest of another text
(AEP_CLI_APPROVAL_CHANGED, exit 3); when the complete text does not reach this terminal (capture
metadata, redaction changed it, or no approvaldigest) allowing is refused
(AEP_CLI_APPROVAL_INCOMPLETE, exit 3): deny, or answer on the agent's machine. Denying never
needs a digest. Text that maps to an allowing option (e.g. --text yes) counts as allowing.

Capture: free text (--text, string values, anything without a field type) is sent at redacted
when the redaction pipeline leaves it unchanged, else at full (the agent gets the exact value;
readers below full never see it); --capture redacted sends the redacted text instead.

Exit codes: 0 accepted, 2 usage / unknown request / allow without --digest, 3 refused
(rejected by the agent, refused by the relay such as no-route or unauthorized, a request whose
agent is offline AEP_CLI_AGENT_OFFLINE, a wrong token
AEP_CLI_RELAY_REFUSED, or allowing refused by aep), 4 no ack within the window,
5 relay unreachable.

Examples:
  aep respond 01K0FORMREQ… --values '{"1":"nightly-bk","2":30,"3":true,"4":["1","3"]}'
  aep respond 01K0PERMREQ… --show
  aep respond 01K0PERMREQ… --option allow --digest 3f5c…
  aep respond 01K0PERMREQ… --option deny --text "use the staging registry"`,
    );
  addRelayOptions(cmd).action(
    action(async (requestId: string, opts: RespondOpts) => {
      const url = relayUrl(opts.relay);
      const hasAnswer = opts.values !== undefined || opts.option !== undefined || opts.text !== undefined;
      if (opts.show) {
        if (hasAnswer) throw new CliError('AEP_CLI_USAGE', '--show prints the request and sends nothing: give it without --values/--option/--text');
        await show(url, opts.token, requestId, opts.json === true);
        return;
      }
      const given = [opts.values !== undefined, opts.option !== undefined || opts.text !== undefined].filter(Boolean).length;
      if (given !== 1)
        throw new CliError('AEP_CLI_USAGE', 'give exactly one answer: --values JSON, or --option ID and/or --text S (or --show to read the request)');
      let values: Record<string, unknown> | undefined;
      if (opts.values !== undefined) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(opts.values);
        } catch (err) {
          throw new CliError('AEP_CLI_BAD_VALUES', `--values is not valid JSON: ${(err as Error).message}`);
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new CliError('AEP_CLI_BAD_VALUES', '--values must be a JSON object (field id → value, AEP-0006 §3)');
        values = parsed as Record<string, unknown>;
      }
      const ackWindowMs = positiveInt('--ack-window', opts.ackWindow);
      const retries = Number(opts.retries);
      if (!Number.isSafeInteger(retries) || retries < 0)
        throw new CliError('AEP_CLI_BAD_OPTION', `--retries must be a non-negative integer, got "${String(opts.retries)}"`);
      const answer = {
        ...(values ? { values } : {}),
        ...(opts.option !== undefined ? { option: opts.option } : {}),
        ...(opts.text !== undefined ? { text: opts.text } : {}),
      };
      const { findRequest, requireRequest, proofFor } = await import('../util/request.js');
      // The request as this reader receives it: its session, its fields (what each value is) and
      // its approval text. With --session and no such request held, the agent alone decides.
      const event = opts.session === undefined ? await requireRequest(url, opts.token, requestId) : await findRequest(url, opts.token, requestId);
      const session = opts.session ?? String(event?.session);
      const proof = event ? proofFor(event, answer, opts.digest, selfCommand()) : undefined;
      const result = await sendAnswer({
        url,
        ...(opts.token ? { token: opts.token } : {}),
        requestId,
        session,
        answer,
        ackWindowMs,
        retries,
        agent: opts.agent ?? 'aep-cli',
        ...(event ? { event } : {}),
        ...(proof !== undefined ? { proof } : {}),
        ...(opts.capture ? { capture: opts.capture } : {}),
      });
      // The relay refuses an answer to a request whose asker is gone (contract C3 `no-route`): say
      // so with the code `aep answer` uses, and since when (contract C4 roster `offline`).
      if (result.status === 'refused' && result.reason === 'no-route') {
        const facts = await import('../util/request-facts.js');
        const gone = (await facts.offlineRequests(url, opts.token).catch(() => undefined))?.get(facts.requestKey(session, requestId));
        if (gone) {
          const { oneLine } = await import('../util/render.js');
          throw new CliError(
            'AEP_CLI_AGENT_OFFLINE',
            `request ${oneLine(requestId)} cannot be answered: its agent (${oneLine(gone.agent)}) has been offline since ${oneLine(gone.since)}; the relay delivered nothing (it is dismissed if the agent comes back without it, or expires)`,
          );
        }
      }
      await printResult(result, opts.json === true);
      process.exitCode = exitFor(result.status);
    }),
  );
}

/** `respond --show`: the request complete, with its approval digest and how to answer it. */
async function show(url: string, token: string | undefined, requestId: string, json: boolean): Promise<void> {
  const [{ requireRequest }, render, { approvalView }, { listPending }] = await Promise.all([
    import('../util/request.js'),
    import('../util/render.js'),
    import('@aep/protocol'),
    import('@aep/client/node'),
  ]);
  const event = await requireRequest(url, token, requestId);
  let pending: boolean;
  try {
    pending = (await listPending({ url, ...(token ? { token } : {}), filter: { session: String(event.session) } })).some((p) => p.id === event.id);
  } catch (err) {
    mapClientError(err, url);
  }
  const req = render.requestFromEvent(event);
  const view = approvalView(event);
  if (json) {
    process.stdout.write(
      JSON.stringify({
        id: req.id,
        session: req.session,
        agent: req.agent,
        source: event.source,
        time: req.time,
        capture: req.capture,
        kind: req.data['kind'],
        pending,
        approval: render.approvalJson(view),
        event,
      }) + '\n',
    );
    return;
  }
  process.stdout.write(render.renderRequest(req, { aep: selfCommand(), hints: pending, fields: true }) + '\n');
  if (!pending) process.stdout.write('  (no longer pending: answered, timed out or dismissed)\n');
}

/** What `aep respond` and `aep answer` send. */
export interface AnswerRequest {
  url: string;
  token?: string;
  requestId: string;
  session: string;
  answer: { option?: string; text?: string; values?: Record<string, unknown> };
  /** The request as received (its fields tell which values are structural). */
  event?: WireEvent;
  /** `approvalproof` of a permissive answer (contract C1). */
  proof?: string;
  ackWindowMs?: number;
  retries?: number;
  agent?: string;
  capture?: CaptureLevel;
}

/** The result shape printed by `aep respond` (a subset of the SDK's CommandResult). */
export interface RespondOutcome {
  status: 'accepted' | 'rejected' | 'refused' | 'no-ack';
  reason?: string;
  detail?: string;
  issues?: { rule: string; path: string; message?: string }[];
  command: string;
  session: string;
  capture: CaptureLevel;
}

/** Labels the answer honestly, builds the command (with its approval proof), sends it, waits for the ack. */
export async function sendAnswer(req: AnswerRequest): Promise<RespondOutcome> {
  const cmd = await import('../util/command.js');
  const data = req.event?.data;
  const fields = data && Array.isArray(data['fields']) ? (data['fields'] as FieldSpec[]) : undefined;
  const free = cmd.answerFreeText(req.answer, fields);
  const choice = cmd.chooseCapture(free, req.capture);
  if (choice.note) process.stderr.write(`aep: note: ${choice.note}\n`);
  const answer = cmd.applyChoice(req.answer, free, choice);
  const agent = req.agent ?? 'aep-cli';
  const envelope = cmd.buildCommand({
    type: 'control.attention.respond',
    session: req.session,
    agent,
    capture: choice.capture,
    data: { answer },
    subject: req.requestId,
    cause: req.requestId,
    ...(req.proof !== undefined ? { extensions: { approvalproof: req.proof } } : {}),
  });
  const r = await cmd.sendCommand(
    {
      url: req.url,
      ...(req.token ? { token: req.token } : {}),
      agent,
      ...(req.ackWindowMs ? { ackWindowMs: req.ackWindowMs } : {}),
      ...(req.retries !== undefined ? { retries: req.retries } : {}),
    },
    envelope,
  );
  return {
    status: r.status,
    session: req.session,
    command: r.command.id,
    capture: choice.capture,
    ...(r.reason !== undefined ? { reason: r.reason } : {}),
    ...(r.detail !== undefined ? { detail: r.detail } : {}),
    ...(r.issues !== undefined ? { issues: r.issues } : {}),
  };
}

/** Exit code for a command status (docs: aep respond --help). */
export function exitFor(status: RespondOutcome['status']): 0 | 3 | 4 {
  if (status === 'accepted') return EXIT.OK;
  if (status === 'no-ack') return EXIT.NO_ACK;
  return EXIT.REJECTED;
}

/** Human or JSON rendering of a command result (stdout). */
export async function printResult(r: RespondOutcome, json: boolean): Promise<void> {
  if (json) {
    process.stdout.write(JSON.stringify(r) + '\n');
    return;
  }
  const { oneLine } = await import('../util/render.js');
  const lines: string[] = [];
  if (r.status === 'accepted') lines.push(`accepted (command ${r.command}, session ${oneLine(r.session)})`);
  else if (r.status === 'rejected') lines.push(`rejected: ${oneLine(r.reason ?? 'unknown')}${r.detail ? ` (${oneLine(r.detail)})` : ''}`);
  else if (r.status === 'refused') lines.push(`refused by the relay: ${oneLine(r.reason ?? 'error')}${r.detail ? ` (${oneLine(r.detail)})` : ''}`);
  else lines.push(`no ack within the window (command ${r.command}); the target may be gone or busy`);
  for (const i of r.issues ?? []) {
    // Messages usually name their rule already ("form.required-missing: …"): don't repeat it.
    const msg = i.message ? oneLine(i.message.startsWith(`${i.rule}: `) ? i.message.slice(i.rule.length + 2) : i.message) : '';
    lines.push(`  - ${oneLine(i.rule)} at ${oneLine(i.path)}${msg ? `: ${msg}` : ''}`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}
