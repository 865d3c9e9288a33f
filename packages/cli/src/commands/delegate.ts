import type { Command } from 'commander';
import type * as DelegateModule from '@aep/delegate';
import type * as PromptsModule from '@inquirer/prompts';
import type { WireEvent } from '@aep/client';
import type { CommandSender } from '@aep/client/node';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import type { ExitCode } from '../util/exit.js';
import { addRelayOptions, mapClientError, relayUrl } from '../util/relay.js';

/** One-line rendering of untrusted text (no control or invisible characters reach the terminal). */
function clean(text: unknown): string {
  // eslint-disable-next-line no-control-regex
  return String(text).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g, '?');
}

/** `DelegateError` (and the codes below) -> `CliError` with the table's exit status; client errors as everywhere. */
async function fail(code: DelegateModule.DelegateErrorCode, message: string): Promise<never> {
  const d = await import('@aep/delegate');
  throw new CliError(code, message, d.DELEGATE_ERRORS[code].exit as ExitCode);
}

async function mapError(err: unknown): Promise<never> {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && code.startsWith('AEP_DELEGATE_')) {
    const d = await import('@aep/delegate');
    const row = (d.DELEGATE_ERRORS as Record<string, { exit: number }>)[code];
    throw new CliError(code, (err as Error).message, (row?.exit ?? EXIT.USAGE) as ExitCode);
  }
  mapClientError(err);
}

interface RelayOpts {
  relay?: string;
  /** `--token`, `AEP_TOKEN`, `--token-file` or `--token-fd` (the shared relay options resolve them). */
  token?: string;
}

function withToken(cmd: Command): Command {
  return addRelayOptions(cmd);
}

interface RunOpts extends RelayOpts {
  policy?: string;
  check?: boolean;
  agent: string;
  session: string;
  stateDir?: string;
  killSwitch?: string;
  json?: boolean;
}

const OUTCOME: Record<string, string> = {
  policy: 'answered',
  shadow: 'would answer (shadow)',
  ask: 'left to a person (ask rule)',
  'no-match': 'left to a person (no rule matched)',
  never: 'left to a person (never answered by a delegate)',
  paused: 'paused: left to a person',
  'rate-limited': 'rate limited: left to a person',
};

/** What `aep up --policy FILE` starts: the delegate in the same process, with the relay's token. */
export async function startDelegateForUp(o: {
  url: string;
  token: string;
  policyFile: string;
  log: (line: string) => void;
}): Promise<{ close: () => Promise<void> }> {
  const d = await import('@aep/delegate');
  try {
    const policy = d.loadPolicyFile(o.policyFile);
    const h = await d.startDelegate({ url: o.url, token: o.token, policy, log: o.log });
    o.log(
      `delegate: deciding by ${o.policyFile} (${policy.rules.length} rules${policy.shadow ? ', shadow mode' : ''}); pause with: aep delegate pause; log: ${h.logFile}`,
    );
    return h;
  } catch (err) {
    return mapError(err);
  }
}

/** `aep delegate`: a policy delegate and its tools (issue 18). */
export function register(program: Command): void {
  const cmd = program
    .command('delegate')
    .description('answer routine attention requests by rule (a policy delegate): structural facts only, audited, with a kill switch')
    .addHelpText(
      'after',
      `
Rules see structural facts only (agent, session, kind, tool, field ids and types, choice ids,
numbers, booleans, the approval digest, time of day, how long pending), never prompts or labels.
The rule language, examples and the token to give the delegate: docs/delegates.md.`,
    );

  const run = cmd
    .command('run', { isDefault: true })
    .description('connect to the relay and decide pending requests by the policy file (the default subcommand)')
    .option('--policy <file>', 'the policy file (YAML or JSON; docs/delegates.md)')
    .option('--check', 'only check the policy file (schema, Cedar) and exit: 0 valid, 1 invalid')
    .option('--agent <name>', "the delegate's identity (agent of its events and commands)", 'aep-delegate')
    .option('--session <id>', "the delegate's own session (pause/resume, grants)", 'aep-delegate')
    .option('--state-dir <dir>', 'decision log, grants and pause flag (default: $XDG_DATA_HOME/aep/delegate, else ~/.local/share/aep/delegate)')
    .option('--kill-switch <file>', "while this file exists nothing is answered (default: the policy's kill_switch, else STATE_DIR/STOP)")
    .option('--json', 'one JSON object per decision on stdout (default: one readable line)')
    .addHelpText(
      'after',
      `
Give the delegate its own token, scoped to what it may answer (contract C7), e.g.
  aep token create --name delegate --scope read:metadata --scope emit:agent=aep-delegate \\
    --scope answer:agent=claude-code --scope permit:agent=claude-code
and give "steer:session=aep-delegate" only to those who may pause it and create grants.
Every request it considers gets attention.routed (its rule in the policyrule attribute);
answers carry policyrule, and the agent records attention.resolved{resolution:"auto"}.
Stop answering at once: touch the kill switch file, or aep delegate pause. Why a request was
decided as it was: aep delegate explain REQUEST_ID.
Exit codes: 0 stopped (SIGINT/SIGTERM) or policy valid (--check), 1 policy invalid,
2 usage / unreadable file / state dir, 5 relay unreachable.`,
    );
  withToken(run).action(
    action(async (opts: RunOpts) => {
      if (!opts.policy) return fail('AEP_DELEGATE_OPTION', '--policy FILE is required (docs/delegates.md)');
      const d = await import('@aep/delegate');
      let policy: DelegateModule.Policy;
      try {
        policy = d.loadPolicyFile(opts.policy);
        if (policy.engine === 'cedar') await d.createCedarEngine(policy);
      } catch (err) {
        return mapError(err);
      }
      if (opts.check) {
        process.stdout.write(
          `policy ${clean(opts.policy)} is valid: ${policy.rules.length} rule${policy.rules.length === 1 ? '' : 's'}, engine ${policy.engine}${policy.shadow ? ', shadow mode' : ''}, hash ${policy.hash}\n`,
        );
        return;
      }
      const url = relayUrl(opts.relay);
      const token = opts.token;
      let handle: DelegateModule.DelegateHandle;
      try {
        handle = await d.startDelegate({
          url,
          ...(token ? { token } : {}),
          policy,
          agent: opts.agent,
          session: opts.session,
          ...(opts.stateDir ? { stateDir: opts.stateDir } : {}),
          ...(opts.killSwitch ? { killSwitch: opts.killSwitch } : {}),
          log: (l) => process.stderr.write(`${l}\n`),
          onDecision: (r) => {
            if (opts.json)
              process.stdout.write(
                JSON.stringify({
                  event: 'decision',
                  request: r.request,
                  session: r.session,
                  agent: r.agent,
                  kind: r.kind,
                  tool: r.tool,
                  outcome: r.outcome,
                  rule: r.rule,
                  answer: r.answer,
                  reason: r.reason,
                }) + '\n',
              );
            else
              process.stdout.write(
                `${r.request} ${clean(r.agent)} ${r.kind}${r.tool !== undefined ? ` ${clean(r.tool)}` : ''}: ${OUTCOME[r.outcome] ?? r.outcome}${r.rule ? ` by ${r.rule}` : ''}${r.answer?.option ? ` (${clean(r.answer.option)})` : r.answer?.values ? ' (values)' : ''}\n`,
              );
          },
        });
      } catch (err) {
        return mapError(err);
      }
      const ready = {
        event: 'ready',
        agent: handle.agent,
        session: handle.session,
        rules: policy.rules.length,
        engine: policy.engine,
        shadow: policy.shadow,
        log: handle.logFile,
        kill_switch: handle.killSwitch,
      };
      process.stdout.write(
        opts.json
          ? JSON.stringify(ready) + '\n'
          : `aep delegate ready: ${handle.agent} (session ${handle.session}), ${policy.rules.length} rules (${policy.engine})${policy.shadow ? ', SHADOW: answers nothing' : ''}; kill switch ${handle.killSwitch}\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => {
          void handle.close().then(resolve, resolve);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
    }),
  );

  cmd
    .command('explain')
    .description("print which rule decided a request and why, from the delegate's decision log")
    .argument('<request-id>', 'the attention.requested id')
    .option('--state-dir <dir>', "the delegate's state directory (default: $XDG_DATA_HOME/aep/delegate, else ~/.local/share/aep/delegate)")
    .option('--log <file>', 'the decision log itself (default: STATE_DIR/decisions.jsonl)')
    .option('--json', 'print the log records of the request as JSON lines')
    .addHelpText('after', '\nExit codes: 0 found, 2 no entry for that request (or no log).')
    .action(
      action(async (requestId: string, opts: { stateDir?: string; log?: string; json?: boolean }) => {
        const d = await import('@aep/delegate');
        const { join } = await import('node:path');
        const file = opts.log ?? join(opts.stateDir ?? d.defaultStateDir(), 'decisions.jsonl');
        const records = d.readRecords(file, requestId);
        if (records.length === 0) return fail('AEP_DELEGATE_NOT_FOUND', `the decision log ${clean(file)} has no entry for request ${clean(requestId)}`);
        if (opts.json) for (const r of records) process.stdout.write(JSON.stringify(r) + '\n');
        else for (const l of d.explain(records)) process.stdout.write(`${clean(l)}\n`);
      }),
    );

  for (const verb of ['pause', 'resume'] as const) {
    const c = cmd
      .command(verb)
      .description(
        verb === 'pause'
          ? 'stop the delegate answering at once (control.pause to its session; survives a restart)'
          : 'let a paused delegate answer again (control.resume)',
      )
      .option('--session <id>', "the delegate's session", 'aep-delegate')
      .option('--agent <name>', 'sender identity', 'aep-cli')
      .option('--ack-window <ms>', 'how long to wait for the ack', '10000')
      .addHelpText(
        'after',
        '\nExit codes: 0 accepted, 3 rejected or refused (no delegate on that session, or the token lacks steer), 4 no ack, 5 unreachable.',
      );
    withToken(c).action(
      action(async (opts: RelayOpts & { session: string; agent: string; ackWindow: string }) => {
        const result = await steer(opts, (s) => (verb === 'pause' ? s.pause({ session: opts.session }) : s.resume({ session: opts.session })));
        await report(result, `the delegate ${verb === 'pause' ? 'is paused: it answers nothing until aep delegate resume' : 'answers again'}`);
      }),
    );
  }

  const grant = cmd
    .command('grant')
    .description('"Always allow this": let the delegate allow this exact request again (same agent, tool and approval text) until the grant expires')
    .argument('<request-id>', 'a pending permission request whose complete approval text you can see')
    .option('--ttl <duration>', "how long the grant holds (e.g. 30m, 8h, 7d; default and maximum: the delegate's policy)")
    .option('--session-only', "only in the request's session")
    .option('--delegate-session <id>', "the delegate's session (default: the live delegate found in the roster)")
    .option('--yes', 'grant without asking (the approval text is still printed)')
    .option('--agent <name>', 'sender identity', 'aep-cli')
    .option('--ack-window <ms>', 'how long to wait for the ack', '10000')
    .addHelpText(
      'after',
      `
The approval text is printed in full (control and invisible characters made visible) before
anything is sent; only a request whose complete text you received can be granted. The grant
command carries the text at capture full to the delegate's session (only readers at full see it).
Exit codes: 0 granted, 2 unknown request / incomplete text / declined, 3 refused by the delegate
or the relay, 4 no ack, 5 unreachable.`,
    );
  withToken(grant).action(
    action(
      async (
        requestId: string,
        opts: RelayOpts & { ttl?: string; sessionOnly?: boolean; delegateSession?: string; yes?: boolean; agent: string; ackWindow: string },
      ) => {
        const url = relayUrl(opts.relay);
        const token = opts.token;
        const d = await import('@aep/delegate');
        const client = await import('@aep/client/node');
        const { visibleText } = await import('@aep/protocol');
        let pending;
        try {
          pending = await client.listPending({ url, ...(token ? { token } : {}) });
        } catch (err) {
          mapClientError(err);
        }
        const req = pending.find((p) => p.id === requestId);
        if (!req) throw new CliError('AEP_CLI_UNKNOWN_REQUEST', `no pending attention request ${clean(requestId)} (see: aep inbox)`, EXIT.USAGE);
        const made = d.grantDataFor(req.event, { ...(opts.ttl ? { ttl: opts.ttl } : {}), sessionOnly: opts.sessionOnly === true });
        if (!made.ok) return fail('AEP_DELEGATE_INCOMPLETE', `cannot grant ${clean(requestId)}: ${made.reason}`);
        const data = made.data;
        process.stdout.write(
          `Always allow ${clean(String(data['agent']))} to run ${clean(String(data['tool']))} with exactly this input${opts.sessionOnly ? ` in session ${clean(req.session)}` : ''}${opts.ttl ? ` for ${clean(opts.ttl)}` : ''}:\n`,
        );
        process.stdout.write(`${visibleText(String(data['text']))}\n`);
        if (!opts.yes) {
          if (!process.stdin.isTTY) throw new CliError('AEP_CLI_NOT_A_TTY', 'confirm with --yes (stdin is not a terminal)', EXIT.USAGE);
          const { confirm } = await import('@inquirer/prompts');
          if (!(await confirm({ message: 'Create this grant?', default: false }))) throw new CliError('AEP_CLI_CANCELLED', 'no grant was made', EXIT.USAGE);
        }
        const result = await sendToDelegate(opts, token, url, d.GRANT_COMMAND, data, 'full');
        await report(
          result,
          'granted: the delegate allows this exact request until the grant expires (revoke: aep delegate revoke GRANT_ID, list: aep delegate grants)',
        );
      },
    ),
  );

  const revoke = cmd
    .command('revoke')
    .description("revoke a grant (x.aep.control.revoke to the delegate's session)")
    .argument('<grant-id>', 'the grant (grant-…; see aep delegate grants)')
    .option('--delegate-session <id>', "the delegate's session (default: the live delegate found in the roster)")
    .option('--agent <name>', 'sender identity', 'aep-cli')
    .option('--ack-window <ms>', 'how long to wait for the ack', '10000')
    .addHelpText('after', '\nExit codes: 0 revoked, 3 refused (unknown grant, no delegate), 4 no ack, 5 unreachable.');
  withToken(revoke).action(
    action(async (grantId: string, opts: RelayOpts & { delegateSession?: string; agent: string; ackWindow: string }) => {
      const url = relayUrl(opts.relay);
      const token = opts.token;
      const d = await import('@aep/delegate');
      await report(await sendToDelegate(opts, token, url, d.REVOKE_COMMAND, { grant: grantId }, 'metadata'), `revoked ${clean(grantId)}`);
    }),
  );

  const list = cmd
    .command('grants')
    .description("list the active grants of a delegate (folded from its session's x.aep.policy.* events)")
    .option('--delegate-session <id>', "the delegate's session", 'aep-delegate')
    .option('--json', 'one JSON object per grant')
    .addHelpText(
      'after',
      '\nGrant details need a reader at capture full (or as received): relays drop x.* payloads below full.\nExit codes: 0, 5 unreachable.',
    );
  withToken(list).action(
    action(async (opts: RelayOpts & { delegateSession: string; json?: boolean }) => {
      const url = relayUrl(opts.relay);
      const token = opts.token;
      const d = await import('@aep/delegate');
      const client = await import('@aep/client/node');
      const fold = new d.PolicyFold();
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), 15_000);
      const sub = client.subscribe(
        {
          url,
          ...(token ? { token } : {}),
          filter: { session: opts.delegateSession },
          from: 'all',
          live: false,
          transport: 'sse',
          signal: ac.signal,
          reconnect: { maxAttempts: 0 },
        },
        (e) => {
          fold.push(e);
        },
      );
      try {
        await sub.ready;
        await sub.done;
      } catch (err) {
        mapClientError(err);
      } finally {
        clearTimeout(timer);
      }
      const grants = fold.active(Date.now());
      if (opts.json) for (const g of grants) process.stdout.write(JSON.stringify(g) + '\n');
      else {
        process.stdout.write(
          `delegate ${clean(opts.delegateSession)}: ${fold.paused ? 'PAUSED' : 'active'}, ${grants.length} grant${grants.length === 1 ? '' : 's'}\n`,
        );
        for (const g of grants)
          process.stdout.write(
            `  ${g.grant}  ${clean(g.agent)} ${clean(g.tool)} approvaldigest ${g.digest}${g.session ? ` session ${clean(g.session)}` : ''} until ${g.expires}\n`,
          );
      }
    }),
  );

  cmd
    .command('digest')
    .description('print the approvaldigest of an approval text (for digest: in a rule); reads stdin without TEXT')
    .argument('[text]', 'the exact approval text (for Bash: the whole command)')
    .addHelpText('after', '\nThe text is taken verbatim (a trailing newline from stdin is removed). Exit code 0.')
    .action(
      action(async (text: string | undefined) => {
        const { approvalDigest } = await import('@aep/protocol');
        let t = text;
        if (t === undefined || t === '-') {
          const chunks: Buffer[] = [];
          for await (const c of process.stdin) chunks.push(c as Buffer);
          t = Buffer.concat(chunks)
            .toString('utf8')
            .replace(/\r?\n$/, '');
        }
        process.stdout.write(`${approvalDigest(t)}\n`);
      }),
    );
}

/**
 * `aep answer`, after the person allowed an approval request whose complete text they saw (the
 * answer carried the proof): "Always allow this exact input?" when one live delegate takes
 * grants. Never fails the answer that was already accepted: problems are printed.
 */
export async function offerGrant(o: { url: string; token?: string; event: WireEvent; agent: string; prompts: typeof PromptsModule }): Promise<void> {
  try {
    const d = await import('@aep/delegate');
    const made = d.grantDataFor(o.event);
    if (!made.ok) return;
    const client = await import('@aep/client/node');
    const sender = new client.CommandSender({ url: o.url, ...(o.token ? { token: o.token } : {}), agent: o.agent, retries: 0 });
    try {
      const roster = await sender.roster();
      const live = roster ? d.delegatesInRoster(roster.entries) : [];
      if (live.length !== 1) return;
      const ttl = await o.prompts.select({
        message: `Always allow ${clean(String(made.data['agent']))} to run ${clean(String(made.data['tool']))} with exactly this input?`,
        default: 'no',
        choices: [
          { value: 'no', name: 'No, just this once' },
          { value: '1h', name: 'Yes, for 1 hour' },
          { value: '8h', name: 'Yes, for 8 hours' },
          { value: '24h', name: 'Yes, for 24 hours' },
          { value: '7d', name: 'Yes, for 7 days' },
        ],
      });
      if (ttl === 'no') return;
      const { createEmitter } = await import('@aep/protocol');
      const { hostname } = await import('node:os');
      const cmd = createEmitter({ source: `aep://${hostname()}/agent/${encodeURIComponent(o.agent)}`, agent: o.agent }).build({
        type: d.GRANT_COMMAND,
        session: live[0]!.session,
        data: { ...made.data, ttl },
        capture: 'full',
      }) as unknown as WireEvent;
      const r = await sender.send(cmd);
      process.stdout.write(
        r.status === 'accepted'
          ? `granted for ${ttl}: the delegate allows exactly this input until then (aep delegate grants, aep delegate revoke)\n`
          : `no grant was made: ${r.status}${r.reason ? ` ${r.reason}` : ''}${r.detail ? `: ${clean(r.detail)}` : ''}\n`,
      );
    } finally {
      await sender.close();
    }
  } catch (err) {
    if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) return;
    process.stderr.write(`aep: warning: no grant was made: ${clean(err instanceof Error ? err.message : String(err))}\n`);
  }
}

interface SendResult {
  status: string;
  reason?: string;
  detail?: string;
}

async function steer(opts: RelayOpts & { agent: string; ackWindow: string }, fn: (s: CommandSender) => Promise<SendResult>): Promise<SendResult> {
  const url = relayUrl(opts.relay);
  const token = opts.token;
  const client = await import('@aep/client/node');
  const sender = new client.CommandSender({ url, ...(token ? { token } : {}), agent: opts.agent, ackWindowMs: Number(opts.ackWindow) || 10_000, retries: 0 });
  try {
    return await fn(sender);
  } catch (err) {
    mapClientError(err);
  } finally {
    await sender.close();
  }
}

async function sendToDelegate(
  opts: RelayOpts & { delegateSession?: string; agent: string; ackWindow: string },
  token: string | undefined,
  url: string,
  type: string,
  data: Record<string, unknown>,
  capture: 'metadata' | 'full',
): Promise<SendResult> {
  return steer(opts, async (sender) => {
    let session = opts.delegateSession;
    if (session === undefined) {
      const d = await import('@aep/delegate');
      const roster = await sender.roster();
      const live = roster ? d.delegatesInRoster(roster.entries) : [];
      if (live.length !== 1) {
        return fail(
          'AEP_DELEGATE_NO_DELEGATE',
          live.length === 0
            ? "no live delegate found in the relay's roster (start aep delegate, or name it with --delegate-session)"
            : `several live delegates (${live.map((e) => clean(e.session)).join(', ')}): name one with --delegate-session`,
        );
      }
      session = live[0]!.session;
    }
    const { createEmitter } = await import('@aep/protocol');
    const { hostname } = await import('node:os');
    const cmd = createEmitter({ source: `aep://${hostname()}/agent/${encodeURIComponent(opts.agent)}`, agent: opts.agent }).build({
      type,
      session,
      data,
      capture,
    }) as unknown as WireEvent;
    return sender.send(cmd);
  });
}

async function report(r: SendResult, ok: string): Promise<void> {
  if (r.status === 'accepted') {
    process.stdout.write(`${ok}\n`);
    return;
  }
  if (r.status === 'no-ack') return fail('AEP_DELEGATE_NO_ACK', 'no acknowledgement from the delegate within the ack window');
  return fail(
    'AEP_DELEGATE_REFUSED',
    `${r.status === 'refused' ? 'refused by the relay' : 'rejected by the delegate'}: ${r.reason ?? ''}${r.detail ? `: ${clean(r.detail)}` : ''}`,
  );
}
