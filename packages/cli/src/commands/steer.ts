import type { Command } from 'commander';
import { action, CliError } from '../util/errors.js';
import { addRelayOptions, positiveInt, relayUrl } from '../util/relay.js';
import { exitFor, printResult, type RespondOutcome } from './respond.js';

interface SteerOpts {
  relay?: string;
  token?: string;
  session?: string;
  run?: string;
  reason?: string;
  ackWindow: string;
  retries: string;
  agent: string;
  json?: boolean;
}

type Verb = 'cancel' | 'pause' | 'resume';

const WHAT: Record<Verb, { description: string; outcome: string }> = {
  cancel: {
    description: "stop an agent's run (--run) or whole session: sends control.cancel and waits for its ack",
    outcome: 'The agent acks, then reports run.cancelled (and/or session.ended) cause-linked to the command.',
  },
  pause: {
    description: "pause an agent's session: sends control.pause and waits for its ack",
    outcome: 'The agent acks, then reports its paused state (e.g. progress.status {phase:"paused"}) cause-linked to the command.',
  },
  resume: {
    description: 'resume a paused agent: sends control.resume and waits for its ack',
    outcome: 'The agent acks, then goes on; its next events are cause-linked to the command.',
  },
};

/** `aep cancel|pause|resume`: steer a running agent (AEP-0004 §5, contract C8). */
function registerVerb(program: Command, verb: Verb): void {
  const cmd = program
    .command(verb)
    .description(WHAT[verb].description)
    .requiredOption('--session <id>', 'the target session (where the agent runs)')
    .option(
      '--run <id>',
      verb === 'cancel' ? 'cancel only this run (scope "run"); default: the whole session (scope "session")' : 'the run concerned (envelope run attribute)',
    );
  if (verb === 'cancel')
    cmd.option('--reason <text>', 'why, for the agent and the record (free text: redacted, or full when the redaction pipeline would change it)');
  cmd
    .option('--ack-window <ms>', 'how long to wait for the ack per attempt', '10000')
    .option('--retries <n>', 'extra attempts with the identical command after a silent window', '1')
    .option('--agent <name>', 'sender identity (agent of the command)', 'aep-cli')
    .option('--json', 'print the result as one JSON object')
    .addHelpText(
      'after',
      `
${WHAT[verb].outcome}
An agent that cannot ${verb} nacks it "unsupported"; the relay refuses with no-route when no
agent owns the session. Exit codes: 0 accepted, 2 usage, 3 rejected or refused (by the agent,
by the relay, or a wrong token: AEP_CLI_RELAY_REFUSED), 4 no ack within the window,
5 relay unreachable.

Example:
  aep ${verb} --session demo-20260703-x1y2z3${verb === 'cancel' ? ' --run run-a1b2c3 --reason "wrong branch"' : ''}`,
    );
  addRelayOptions(cmd).action(
    action(async (opts: SteerOpts) => {
      const url = relayUrl(opts.relay);
      if (!opts.session) throw new CliError('AEP_CLI_BAD_OPTION', '--session must not be empty');
      if (opts.run === '') throw new CliError('AEP_CLI_BAD_OPTION', '--run must not be empty');
      const ackWindowMs = positiveInt('--ack-window', opts.ackWindow);
      const retries = Number(opts.retries);
      if (!Number.isSafeInteger(retries) || retries < 0)
        throw new CliError('AEP_CLI_BAD_OPTION', `--retries must be a non-negative integer, got "${String(opts.retries)}"`);
      const c = await import('../util/command.js');
      // AEP-0004 §5: cancel {scope, reason? [redacted]}, pause {}, resume {}; `run` set for run scope.
      let data: Record<string, unknown> = {};
      let capture: Awaited<ReturnType<typeof c.chooseCapture>>['capture'] = 'metadata';
      if (verb === 'cancel') {
        const free = opts.reason !== undefined ? [{ path: '/data/reason', value: opts.reason }] : [];
        const choice = c.chooseCapture(free);
        if (choice.note) process.stderr.write(`aep: note: ${choice.note}\n`);
        capture = choice.capture;
        data = { scope: opts.run !== undefined ? 'run' : 'session', ...(opts.reason !== undefined ? { reason: opts.reason } : {}) };
      }
      const envelope = c.buildCommand({
        type: `control.${verb}`,
        session: opts.session,
        agent: opts.agent,
        capture,
        data,
        ...(opts.run !== undefined ? { run: opts.run } : {}),
      });
      const r = await c.sendCommand({ url, ...(opts.token ? { token: opts.token } : {}), agent: opts.agent, ackWindowMs, retries }, envelope);
      const outcome: RespondOutcome = {
        status: r.status,
        session: opts.session,
        command: r.command.id,
        capture,
        ...(r.reason !== undefined ? { reason: r.reason } : {}),
        ...(r.detail !== undefined ? { detail: r.detail } : {}),
        ...(r.issues !== undefined ? { issues: r.issues } : {}),
      };
      await printResult(outcome, opts.json === true);
      process.exitCode = exitFor(r.status);
    }),
  );
}

/** `aep cancel`. */
export function registerCancel(program: Command): void {
  registerVerb(program, 'cancel');
}
/** `aep pause`. */
export function registerPause(program: Command): void {
  registerVerb(program, 'pause');
}
/** `aep resume`. */
export function registerResume(program: Command): void {
  registerVerb(program, 'resume');
}
