import type { Command } from 'commander';
import { Option } from 'commander';
import type { FieldSpec } from '@aep/client';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addRelayOptions, mapClientError, positiveInt, relayUrl } from './respond.js';

interface DemoOpts {
  relay?: string;
  token?: string;
  agent: string;
  session?: string;
  only: 'form' | 'permission' | 'both';
  capture: 'none' | 'metadata' | 'redacted' | 'full';
  timeoutMs?: string;
  stateDir?: string;
}

/** The five-field form of the demo (AEP-0006 §6 worked example shape). */
export const DEMO_FORM_FIELDS: FieldSpec[] = [
  { id: '1', type: 'string', label: 'Bucket name', required: true },
  { id: '2', type: 'number', label: 'Retention (days)', min: 1, max: 365 },
  { id: '3', type: 'boolean', label: 'Encrypt at rest?' },
  { id: '4', type: 'select', label: 'Weekdays', multi: true, choices: [{ id: '1', label: 'Mon' }, { id: '2', label: 'Wed' }, { id: '3', label: 'Fri' }] },
  { id: '5', type: 'select', label: 'Storage class', other: true, choices: [{ id: '1', label: 'standard' }, { id: '2', label: 'archive' }] },
];

/** `aep demo agent`: a small emitter raising a five-field form and a permission request. */
export function register(program: Command): void {
  const demo = program.command('demo').description('demo programs (an agent that asks questions)');
  const agentCmd = demo
    .command('agent')
    .description('connect as an emitter, raise a five-field form and a permission request, print the answers as JSON lines')
    .option('--agent <name>', 'agent identity', 'demo-agent')
    .option('--session <id>', 'session id (default: generated)')
    .addOption(new Option('--only <which>', 'which requests to raise').choices(['form', 'permission', 'both']).default('both'))
    .addOption(new Option('--capture <level>', 'capture level of the events').choices(['none', 'metadata', 'redacted', 'full']).default('redacted'))
    .option('--timeout-ms <n>', 'expire each request after N ms (attention.timeout); default: wait forever')
    .option('--state-dir <dir>', 'keep the epoch durably in this directory (default: epoch seeded from the clock)')
    .addHelpText('after', `
STDOUT carries one JSON object per line:
  {"event":"ready","session":…,"agent":…}
  {"event":"requested","kind":"form"|"permission","id":<request id>,"session":…}
  {"event":"rejected","id":…,"issues":[…]}          for each invalid answer (nacked; request stays pending)
  {"event":"answered","kind":"form","id":…,"values":{…}}
  {"event":"answered","kind":"permission","id":…,"option":…,"text"?:…}
  {"event":"timeout","kind":…,"id":…}
Progress goes to stderr. Exit 0 when every request was answered, 1 on a timeout,
5 when the relay is unreachable, 130 after SIGINT/SIGTERM (pending requests are dismissed
and the session ended first). The relay needs a token for answers to be routed.`);
  addRelayOptions(agentCmd).action(action(async (opts: DemoOpts) => {
    const url = relayUrl(opts.relay);
    const timeoutMs = opts.timeoutMs !== undefined ? positiveInt('--timeout-ms', opts.timeoutMs) : undefined;
    if (!opts.agent) throw new CliError('AEP_CLI_BAD_OPTION', '--agent must not be empty', EXIT.USAGE);
    await runDemoAgent(url, opts, timeoutMs);
  }));
}

function out(obj: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function progress(line: string): void {
  process.stderr.write(`demo-agent: ${line}\n`);
}

async function runDemoAgent(url: string, opts: DemoOpts, timeoutMs: number | undefined): Promise<void> {
  const client = await import('@aep/client/node');
  const session = opts.session ?? `demo-${new Date().toISOString().replace(/[-:T.Z]/g, '').slice(0, 14)}-${Math.random().toString(36).slice(2, 8)}`;
  let conn: InstanceType<typeof client.EmitterConnection>;
  try {
    conn = await client.EmitterConnection.connect({
      url, ...(opts.token ? { token: opts.token } : {}), agent: opts.agent, capture: opts.capture,
      control: { accepts: ['control.attention.respond'] }, emits: ['session', 'attention', 'control'],
      ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
      log: (l) => progress(l),
    });
  } catch (err) {
    mapClientError(err);
  }
  const engine = new client.AttentionEngine(conn, { capture: opts.capture });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    progress('interrupted: dismissing pending requests and ending the session');
    void (async () => {
      await engine.shutdown();
      engine.endSession(session, { reason: 'killed' });
      await conn.close();
      process.exit(130);
    })();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  conn.emit(session, 'session.started', { client: { name: 'aep demo agent', version: '0.1.0' } }, { capture: opts.capture });
  out({ event: 'ready', session, agent: opts.agent });
  progress(`session ${session} started on ${new URL(url).origin}`);
  let timedOut = false;

  if (opts.only === 'form' || opts.only === 'both') {
    const p = engine.requestAttention({
      session, kind: 'form', prompt: 'Configure the nightly backup', subject: 'backup-config',
      fields: DEMO_FORM_FIELDS,
      ...(timeoutMs !== undefined ? { expiresInMs: timeoutMs } : {}),
      onRejected: (issues) => {
        out({ event: 'rejected', id: p.id, issues: issues.map((i) => ({ rule: i.rule, path: i.path, message: i.message })) });
        progress(`rejected an invalid answer (${issues.map((i) => i.rule).join(', ')}); the form stays pending`);
      },
    });
    out({ event: 'requested', kind: 'form', id: p.id, session });
    progress(`form requested: ${p.id} (answer with: aep answer ${p.id})`);
    const r = await p;
    if (r.status === 'answered') {
      out({ event: 'answered', kind: 'form', id: p.id, values: r.answer.values ?? {} });
      progress('form answered');
    } else if (r.status === 'timeout') {
      timedOut = true;
      out({ event: 'timeout', kind: 'form', id: p.id });
      progress('form timed out');
    } else {
      out({ event: 'dismissed', kind: 'form', id: p.id });
    }
  }

  if (stopping) return new Promise<void>(() => { /* the signal handler ends the session and exits */ });
  if (opts.only === 'permission' || opts.only === 'both') {
    const p = engine.requestAttention({
      session, kind: 'permission', prompt: `Allow ${opts.agent} to run \`rm -rf ./build\` in the workspace?`, subject: 'Bash',
      options: [{ id: 'allow', label: 'Allow' }, { id: 'deny', label: 'Deny' }],
      ...(timeoutMs !== undefined ? { expiresInMs: timeoutMs } : {}),
      onRejected: (issues) => {
        out({ event: 'rejected', id: p.id, issues: issues.map((i) => ({ rule: i.rule, path: i.path, message: i.message })) });
        progress('rejected an invalid answer; the permission request stays pending');
      },
    });
    out({ event: 'requested', kind: 'permission', id: p.id, session });
    progress(`permission requested: ${p.id} (answer with: aep respond ${p.id} --option allow)`);
    const r = await p;
    if (r.status === 'answered') {
      out({ event: 'answered', kind: 'permission', id: p.id, ...(r.answer.option !== undefined ? { option: r.answer.option } : {}), ...(r.answer.text !== undefined ? { text: r.answer.text } : {}) });
      progress(`permission answered: ${r.answer.option ?? '(text)'}`);
    } else if (r.status === 'timeout') {
      timedOut = true;
      out({ event: 'timeout', kind: 'permission', id: p.id });
      progress('permission request timed out');
    } else {
      out({ event: 'dismissed', kind: 'permission', id: p.id });
    }
  }

  if (stopping) return new Promise<void>(() => { /* the signal handler ends the session and exits */ });
  process.off('SIGINT', stop);
  process.off('SIGTERM', stop);
  engine.endSession(session, { reason: 'normal' });
  await engine.shutdown();
  const flushed = await conn.flush(5_000);
  if (!flushed) progress('warning: could not deliver every event before exit');
  await conn.close();
  progress('session ended');
  process.exitCode = timedOut ? EXIT.INVALID : EXIT.OK;
}
