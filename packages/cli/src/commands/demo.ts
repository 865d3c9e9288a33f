import type { Command } from 'commander';
import { Option } from 'commander';
import type * as ClientModule from '@aep/client/node';
import type { CommandDecision, EmitterConnection, FieldSpec, IncomingCommand, WireEvent } from '@aep/client/node';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { DEFAULT_RELAY, addRelayOptions, mapClientError, positiveInt, relayUrl } from '../util/relay.js';
import { quote, selfCommand } from '../util/self.js';

interface DemoOpts {
  relay?: string;
  token?: string;
  agent: string;
  session?: string;
  run?: string;
  only: 'form' | 'permission' | 'both';
  capture: 'none' | 'metadata' | 'redacted' | 'full';
  command: string;
  timeoutMs?: string;
  stateDir?: string;
  tokenFile?: string;
}

/**
 * The relay and token arguments that make a printed hint run as printed (issue 14 item 2):
 * `AEP_HINT_ARGS` when `aep up` started this demo (its URL and the token file it saved; never the
 * token itself: it stays off the environment), else `--relay` when not the default and
 * `--token-file` when the token came from one.
 */
async function hintArgs(url: string, opts: DemoOpts): Promise<string> {
  const given = process.env['AEP_HINT_ARGS'];
  if (given !== undefined && /^[A-Za-z0-9 ._/@:'=+,~-]{0,600}$/.test(given)) return given === '' ? '' : ` ${given}`;
  const { resolve } = await import('node:path');
  const parts: string[] = [];
  if (url !== DEFAULT_RELAY) parts.push(`--relay ${quote(url)}`);
  if (opts.tokenFile !== undefined) parts.push(`--token-file ${quote(resolve(opts.tokenFile))}`);
  return parts.length > 0 ? ` ${parts.join(' ')}` : '';
}

/** The five-field form of the demo (AEP-0006 §6 worked example shape). */
export const DEMO_FORM_FIELDS: FieldSpec[] = [
  { id: '1', type: 'string', label: 'Bucket name', required: true },
  { id: '2', type: 'number', label: 'Retention (days)', min: 1, max: 365 },
  { id: '3', type: 'boolean', label: 'Encrypt at rest?' },
  {
    id: '4',
    type: 'select',
    label: 'Weekdays',
    multi: true,
    choices: [
      { id: '1', label: 'Mon' },
      { id: '2', label: 'Wed' },
      { id: '3', label: 'Fri' },
    ],
  },
  {
    id: '5',
    type: 'select',
    label: 'Storage class',
    other: true,
    choices: [
      { id: '1', label: 'standard' },
      { id: '2', label: 'archive' },
    ],
  },
];

/** The permission request's options: ids say what they do (`optionEffect`). */
const PERMISSION_OPTIONS = [
  { id: 'allow', label: 'Allow' },
  { id: 'deny', label: 'Deny' },
];

/** Steering commands the demo agent honours (AEP-0004 §5, contract C8), declared in `control.accepts`. */
const ACCEPTS = ['control.attention.respond', 'control.cancel', 'control.pause', 'control.resume'];

/** `aep demo agent`: a small emitter raising a five-field form and a permission request. */
export function register(program: Command): void {
  const demo = program.command('demo').description('demo programs (an agent that asks questions)');
  const agentCmd = demo
    .command('agent')
    .description(
      'connect as an emitter, raise a five-field form and a permission request in one run, honour cancel/pause/resume, print what happened as JSON lines',
    )
    .option('--agent <name>', 'agent identity', 'demo-agent')
    .option('--session <id>', 'session id (default: generated)')
    .option('--run <id>', "run id of the demo's one run (default: generated)")
    .addOption(new Option('--only <which>', 'which requests to raise').choices(['form', 'permission', 'both']).default('both'))
    .addOption(new Option('--capture <level>', 'capture level of the events').choices(['none', 'metadata', 'redacted', 'full']).default('redacted'))
    .option('--command <text>', 'what the permission request asks to run: its approval text, sent verbatim with its approvaldigest', 'rm -rf ./build')
    .option('--timeout-ms <n>', 'expire each request after N ms (attention.timeout); default: wait forever')
    .option('--state-dir <dir>', 'keep the epoch durably in this directory (default: epoch seeded from the clock)')
    .addHelpText(
      'after',
      `
STDOUT carries one JSON object per line:
  {"event":"ready","session":…,"agent":…,"run":…}
  {"event":"requested","kind":"form"|"permission","id":<request id>,"session":…}
  {"event":"rejected","id":…,"issues":[…]}          for each invalid answer (nacked; request stays pending)
  {"event":"answered","kind":"form","id":…,"values":{…}}
  {"event":"answered","kind":"permission","id":…,"option":…,"text"?:…}
  {"event":"timeout","kind":…,"id":…}
  {"event":"paused"|"resumed","command":…}          after control.pause / control.resume
  {"event":"waiting","reason":"paused"}             it stops here until control.resume
  {"event":"cancelled","scope":"run"|"session","run":…,"command":…}
The permission request's prompt is the --command text verbatim, with the approvaldigest
attribute; an allowing answer is refused (nack invalid, rule control.respond.approval-proof)
unless it carries the approvalproof only a holder of that complete text can compute.
Steering (control.accepts): control.cancel {scope:"run"|"session"} acks, dismisses the pending
requests, emits run.cancelled (cause = the command) and ends the session; control.pause acks,
reports progress.status {phase:"paused"} and does not go on to the next step until
control.resume (progress.status {phase:"resumed"}). Answers are still recorded while paused.
Progress goes to stderr. Exit 0 when every request was answered, 1 when one was not (a timeout,
or a cancel), 3 when the relay refuses the token (AEP_CLI_RELAY_REFUSED), 5 when it is
unreachable, 130 after SIGINT/SIGTERM (pending requests are dismissed, the run cancelled and the
session ended first). The relay needs a token for answers to be routed.`,
    );
  addRelayOptions(agentCmd).action(
    action(async (opts: DemoOpts) => {
      const url = relayUrl(opts.relay);
      const timeoutMs = opts.timeoutMs !== undefined ? positiveInt('--timeout-ms', opts.timeoutMs) : undefined;
      if (!opts.agent) throw new CliError('AEP_CLI_BAD_OPTION', '--agent must not be empty', EXIT.USAGE);
      if (opts.run === '') throw new CliError('AEP_CLI_BAD_OPTION', '--run must not be empty', EXIT.USAGE);
      await runDemoAgent(url, opts, timeoutMs);
    }),
  );
}

function out(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function progress(line: string): void {
  process.stderr.write(`demo-agent: ${line}\n`);
}

function randomId(): string {
  return Math.random().toString(36).slice(2, 8);
}

/**
 * Connects; a refused token fails at once with one line (the SDK rejects with
 * `AEP_CLIENT_REFUSED` and does not retry, issue 14 item 5), without the SDK's own log lines.
 */
async function connect(client: typeof ClientModule, url: string, opts: DemoOpts): Promise<EmitterConnection> {
  let refused = false;
  let conn: EmitterConnection;
  try {
    conn = new client.EmitterConnection({
      url,
      ...(opts.token ? { token: opts.token } : {}),
      agent: opts.agent,
      capture: opts.capture,
      control: { accepts: ACCEPTS },
      emits: ['session', 'run', 'attention', 'control', 'progress'],
      ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
      log: (l) => {
        if (refused) return; // the one coded line says it all; the socket's own close is noise
        if (/refused the (?:emitter connection|socket)/.test(l)) {
          refused = true;
          return;
        }
        progress(l);
      },
    });
  } catch (err) {
    mapClientError(err, url);
  }
  try {
    await conn.waitReady(5_000);
  } catch (err) {
    await conn.close(0);
    mapClientError(err, url);
  }
  return conn;
}

async function runDemoAgent(url: string, opts: DemoOpts, timeoutMs: number | undefined): Promise<void> {
  const [client, protocol] = await Promise.all([import('@aep/client/node'), import('@aep/protocol')]);
  const aep = selfCommand();
  const hint = await hintArgs(url, opts);
  const session =
    opts.session ??
    `demo-${new Date()
      .toISOString()
      .replace(/[-:T.Z]/g, '')
      .slice(0, 14)}-${randomId()}`;
  const run = opts.run ?? `run-${randomId()}`;
  const conn = await connect(client, url, opts);

  // Approvals (contract C1) are the engine's: the permission request passes its approval text,
  // the engine sets approvaldigest and nacks an allowing answer without the matching proof.
  const engine = new client.AttentionEngine(conn, { capture: opts.capture });

  // ---- steering (contract C8) ------------------------------------------------------------
  let stopping = false;
  let paused = false;
  let wake: (() => void)[] = [];
  let cancelled: { scope: 'run' | 'session'; command: string } | undefined;
  let runEnded = false;
  const wakeAll = () => {
    const w = wake;
    wake = [];
    for (const f of w) f();
  };
  const reasonOf = (cmd: WireEvent): string | undefined => {
    const r = cmd.data !== null && typeof cmd.data === 'object' ? (cmd.data as Record<string, unknown>)['reason'] : undefined;
    if (typeof r !== 'string' || opts.capture === 'none' || opts.capture === 'metadata') return undefined;
    return opts.capture === 'full' ? r : protocol.redact(r);
  };
  conn.onCommand('control.cancel', ({ event: cmd }) => {
    const data = cmd.data !== null && typeof cmd.data === 'object' ? (cmd.data as Record<string, unknown>) : {};
    const scope = data['scope'];
    if (scope !== 'run' && scope !== 'session') {
      return {
        status: 'rejected',
        reason: 'invalid',
        capture: opts.capture,
        issues: [{ rule: 'control.cancel.scope', path: '/data/scope', message: 'scope must be "run" or "session"', section: 'AEP-0004 §5' }],
      };
    }
    if (scope === 'run' && cmd.run !== run) {
      return {
        status: 'rejected',
        reason: 'invalid',
        capture: opts.capture,
        issues: [
          {
            rule: 'control.cancel.unknown-run',
            path: '/run',
            message: 'a run-scoped cancel names the run of this session in the envelope attribute run',
            section: 'AEP-0004 §5',
          },
        ],
      };
    }
    if (runEnded || cancelled || stopping) return { status: 'rejected', reason: 'refused', detail: 'the run is already over', capture: opts.capture };
    cancelled = { scope, command: cmd.id };
    return {
      status: 'accepted',
      after: () => {
        for (const id of engine.pending(session)) engine.dismiss(id, 'cancelled');
        const reason = reasonOf(cmd);
        conn.emit(session, 'run.cancelled', { by: 'control', ...(reason !== undefined ? { reason } : {}) }, { run, cause: cmd.id, capture: opts.capture });
        runEnded = true;
        out({ event: 'cancelled', scope, run, command: cmd.id });
        progress(`cancelled (${scope}) by command ${cmd.id}`);
        wakeAll();
      },
    };
  });
  const steer =
    (phase: 'paused' | 'resumed') =>
    ({ event: cmd }: IncomingCommand): CommandDecision => {
      if (runEnded || cancelled || stopping) return { status: 'rejected', reason: 'refused', detail: 'the run is already over', capture: opts.capture };
      return {
        status: 'accepted',
        after: () => {
          paused = phase === 'paused';
          conn.emit(session, 'progress.status', { phase }, { run, cause: cmd.id, capture: 'metadata' });
          out({ event: phase, command: cmd.id });
          progress(phase === 'paused' ? `paused by command ${cmd.id}: not going on until control.resume` : `resumed by command ${cmd.id}`);
          if (!paused) wakeAll();
        },
      };
    };
  conn.onCommand('control.pause', steer('paused'));
  conn.onCommand('control.resume', steer('resumed'));
  /** Holds the run while paused (answers are still recorded); false when it must stop instead. */
  const proceed = async (): Promise<boolean> => {
    while (paused && !cancelled && !stopping) {
      out({ event: 'waiting', reason: 'paused' });
      await new Promise<void>((resolve) => wake.push(resolve));
    }
    return !cancelled && !stopping;
  };

  const stop = () => {
    if (stopping) return;
    stopping = true;
    progress('interrupted: dismissing pending requests, cancelling the run and ending the session');
    wakeAll();
    void (async () => {
      await engine.shutdown();
      if (!runEnded) conn.emit(session, 'run.cancelled', { by: 'shutdown' }, { run, capture: 'metadata' });
      runEnded = true;
      engine.endSession(session, { reason: 'killed' });
      await conn.close();
      process.exit(130);
    })();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  conn.emit(session, 'session.started', { client: { name: 'aep demo agent', version: '0.1.0' } }, { capture: opts.capture });
  conn.emit(session, 'run.started', { trigger: 'user' }, { run, capture: 'metadata' });
  out({ event: 'ready', session, agent: opts.agent, run });
  progress(`session ${session} (run ${run}) started on ${new URL(url).origin}`);
  let unanswered = false;

  if ((opts.only === 'form' || opts.only === 'both') && (await proceed())) {
    const p = engine.requestAttention({
      session,
      run,
      kind: 'form',
      prompt: 'Configure the nightly backup',
      subject: 'backup-config',
      fields: DEMO_FORM_FIELDS,
      ...(timeoutMs !== undefined ? { expiresInMs: timeoutMs } : {}),
      onRejected: (issues) => {
        out({ event: 'rejected', id: p.id, issues: issues.map((i) => ({ rule: i.rule, path: i.path, message: i.message })) });
        progress(`rejected an invalid answer (${issues.map((i) => i.rule).join(', ')}); the form stays pending`);
      },
    });
    out({ event: 'requested', kind: 'form', id: p.id, session });
    progress(`form requested: ${p.id} (answer with: ${aep} answer ${p.id}${hint})`);
    const r = await p;
    if (r.status === 'answered') {
      out({ event: 'answered', kind: 'form', id: p.id, values: r.answer.values ?? {} });
      progress('form answered');
    } else if (r.status === 'timeout') {
      unanswered = true;
      out({ event: 'timeout', kind: 'form', id: p.id });
      progress('form timed out');
    } else {
      unanswered = true;
      out({ event: 'dismissed', kind: 'form', id: p.id });
    }
  }

  if (stopping)
    return new Promise<void>(() => {
      /* the signal handler ends the session and exits */
    });
  if ((opts.only === 'permission' || opts.only === 'both') && (await proceed())) {
    const p = engine.requestAttention({
      session,
      run,
      kind: 'permission',
      approvalText: opts.command,
      subject: 'Bash',
      options: PERMISSION_OPTIONS,
      ...(timeoutMs !== undefined ? { expiresInMs: timeoutMs } : {}),
      onRejected: (issues) => {
        out({ event: 'rejected', id: p.id, issues: issues.map((i) => ({ rule: i.rule, path: i.path, message: i.message })) });
        progress('rejected an invalid answer; the permission request stays pending');
      },
    });
    out({ event: 'requested', kind: 'permission', id: p.id, session });
    progress(`permission requested: ${p.id} (read it with: ${aep} respond ${p.id} --show${hint}; answer with: ${aep} answer ${p.id}${hint})`);
    const r = await p;
    if (r.status === 'answered') {
      out({
        event: 'answered',
        kind: 'permission',
        id: p.id,
        ...(r.answer.option !== undefined ? { option: r.answer.option } : {}),
        ...(r.answer.text !== undefined ? { text: r.answer.text } : {}),
      });
      progress(`permission answered: ${r.answer.option ?? '(text)'}`);
    } else if (r.status === 'timeout') {
      unanswered = true;
      out({ event: 'timeout', kind: 'permission', id: p.id });
      progress('permission request timed out');
    } else {
      unanswered = true;
      out({ event: 'dismissed', kind: 'permission', id: p.id });
    }
  }

  if (stopping)
    return new Promise<void>(() => {
      /* the signal handler ends the session and exits */
    });
  await proceed(); // paused: the run does not finish until control.resume (or a cancel)
  if (stopping)
    return new Promise<void>(() => {
      /* the signal handler ends the session and exits */
    });
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  const c = cancelled as { scope: 'run' | 'session'; command: string } | undefined;
  if (c) {
    unanswered = true;
    await engine.shutdown();
    conn.emit(session, 'session.ended', { reason: c.scope === 'session' ? 'killed' : 'normal' }, { cause: c.command });
  } else {
    if (!runEnded) conn.emit(session, 'run.finished', {}, { run, capture: 'metadata' });
    runEnded = true;
    engine.endSession(session, { reason: 'normal' });
    await engine.shutdown();
  }
  const flushed = await conn.flush(5_000);
  if (!flushed) progress('warning: could not deliver every event before exit');
  await conn.close();
  progress('session ended');
  process.exitCode = unanswered ? EXIT.INVALID : EXIT.OK;
}
