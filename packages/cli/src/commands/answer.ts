import type { Command } from 'commander';
import type { FieldSpec, PendingAttention } from '@aep/client';
import type * as PromptsModule from '@inquirer/prompts';
import type * as RenderModule from '../util/render.js';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addRelayOptions, mapClientError, positiveInt, relayUrl } from '../util/relay.js';
import { selfCommand } from '../util/self.js';
import { exitFor, printResult, sendAnswer } from './respond.js';

type Render = typeof RenderModule;

interface AnswerOpts {
  relay?: string;
  token?: string;
  ackWindow: string;
  agent: string;
  decline?: boolean;
  cancel?: boolean;
}

/** How a person refuses a form (contract C2, docs/decisions.md "Declining a form"). */
const REFUSALS = [
  { value: 'decline', name: 'Decline: tell the agent you will not answer' },
  { value: 'cancel', name: 'Cancel: dismiss it unanswered' },
] as const;
const ANSWER_FORM = '\u0000answer';

const OTHER = '\u0000other';
const SKIP = '\u0000skip';

/** `aep answer`: answer a pending request interactively in the terminal. */
export function register(program: Command): void {
  const cmd = program
    .command('answer')
    .description('answer a pending attention request interactively (forms, permissions, text) in the terminal')
    .argument('[request-id]', 'request to answer (default: choose among the pending ones)')
    .option('--ack-window <ms>', 'how long to wait for the ack', '10000')
    .option('--agent <name>', 'sender identity (agent of the command)', 'aep-cli')
    .option('--decline', 'decline the form (answer.option "decline", contract C2) without asking anything; needs no terminal')
    .option('--cancel', 'cancel the form: dismiss it unanswered (answer.option "cancel", contract C2) without asking anything; needs no terminal')
    .addHelpText(
      'after',
      `
Renders every form field type: text, number (min/max enforced), yes/no, single select,
multi select (space toggles, enter confirms), and "Other…" free text where the field allows
it. Required fields are marked with *. When the agent rejects the answer, the issues are shown
and the form is asked again with your previous answers as defaults. Every form first asks
whether to answer it, decline it (tell the agent you will not answer) or cancel it (dismiss it
unanswered); --decline and --cancel do that at once (contract C2).
A request whose agent is offline (the relay's roster lists it, contract C4) is shown with the
time the agent went away and is not answered: AEP_CLI_AGENT_OFFLINE, exit 3 (nothing is sent).
A permission request shows what will run complete and verbatim (every line; control, bidi and
zero-width characters made visible), and each option with what it does next to the agent's
label (a label contradicting its id is flagged). Allow is offered only when that complete text
reached this terminal; otherwise only Deny ("answer on the agent's machine").
Needs a terminal (except with --decline or --cancel): with piped stdin it prints the
non-interactive command (aep respond) and exits 2. Exit codes: 0 accepted, 2 usage / no terminal, 3 refused (by the agent, the relay,
a wrong token, or nothing but Allow to offer), 4 no ack, 5 unreachable.`,
    );
  addRelayOptions(cmd).action(
    action(async (requestId: string | undefined, opts: AnswerOpts) => {
      try {
        await run(requestId, opts);
      } catch (err) {
        // Ctrl-C / Ctrl-D inside a prompt: nothing was sent for the current round.
        if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) {
          throw new CliError('AEP_CLI_CANCELLED', 'cancelled; the answer being edited was not sent', EXIT.USAGE);
        }
        throw err;
      }
    }),
  );
}

async function run(requestId: string | undefined, opts: AnswerOpts): Promise<void> {
  const url = relayUrl(opts.relay);
  const ackWindowMs = positiveInt('--ack-window', opts.ackWindow);
  const aep = selfCommand();
  if (opts.decline && opts.cancel) throw new CliError('AEP_CLI_USAGE', 'give one of --decline and --cancel');
  const refusal = opts.decline ? 'decline' : opts.cancel ? 'cancel' : undefined;
  if (refusal !== undefined && !requestId) throw new CliError('AEP_CLI_USAGE', `--${refusal} needs the request id (see: ${aep} inbox)`);
  if (refusal === undefined && (!process.stdin.isTTY || !process.stdout.isTTY)) {
    const id = requestId ? requestId.replace(/[^A-Za-z0-9_-]/g, '?') : 'REQUEST_ID';
    process.stderr.write(
      [
        'aep answer needs an interactive terminal (stdin/stdout is not a TTY).',
        'Answer non-interactively instead:',
        `  ${aep} respond ${id} --show                                  # read it complete first`,
        `  ${aep} respond ${id} --values '{"<field id>": <value>, …}'   # a form (AEP-0006)`,
        `  ${aep} respond ${id} --option <option id> [--text "reason"]  # a permission or choice`,
        `  ${aep} respond ${id} --text "…"                              # free text`,
        `List pending requests with: ${aep} inbox`,
        '',
      ].join('\n'),
    );
    throw new CliError('AEP_CLI_NOT_A_TTY', 'stdin is not a terminal; use aep respond');
  }
  const [{ listPending }, render] = await Promise.all([import('@aep/client/node'), import('../util/render.js')]);
  let pending: PendingAttention[];
  try {
    pending = await listPending({ url, ...(opts.token ? { token: opts.token } : {}) });
  } catch (err) {
    mapClientError(err, url);
  }
  const facts = await import('../util/request-facts.js');
  // Contract C4: which of them the relay knows to have lost their agent.
  const offline = pending.length === 0 ? undefined : await facts.offlineRequests(url, opts.token);
  const offlineOf = (p: PendingAttention) => offline?.get(facts.requestKey(p.session, p.id));
  const refuseOffline = (p: PendingAttention): never => {
    const o = offlineOf(p);
    process.stdout.write(render.renderRequest(p, { aep, hints: false, fields: false, ...(o ? { offline: o } : {}) }) + '\n');
    throw new CliError(
      'AEP_CLI_AGENT_OFFLINE',
      `request ${render.oneLine(p.id)} cannot be answered: its agent (${render.oneLine(o?.agent ?? p.agent)}) has been offline since ${render.oneLine(o?.since ?? '?')}; nothing was sent (it is dismissed if the agent comes back without it, or expires)`,
    );
  };
  let req: PendingAttention | undefined;
  if (requestId) {
    req = pending.find((p) => p.id === requestId);
    if (!req) throw new CliError('AEP_CLI_UNKNOWN_REQUEST', `no pending attention request ${render.oneLine(requestId)} (see: ${aep} inbox)`);
    if (offlineOf(req)) refuseOffline(req);
  } else if (pending.length === 0) {
    process.stdout.write('no pending attention requests\n');
    return;
  } else if (pending.length === 1 && pending[0]) {
    req = pending[0];
    if (offlineOf(req)) refuseOffline(req);
  } else {
    // A menu line is a preview; the chosen request is then shown complete. A request whose
    // agent is offline is listed, disabled, with the time it went away.
    const preview = (t: unknown) => {
      const s = render.oneLine(t);
      return s.length > 70 ? `${s.slice(0, 70)}…` : s;
    };
    const answerable = pending.filter((p) => !offlineOf(p));
    if (answerable.length === 0 && pending[0]) refuseOffline(pending[0]);
    const prompts = await import('@inquirer/prompts');
    const id = await prompts.select({
      message: 'Which request?',
      ...(answerable.length < pending.length && answerable[0] ? { default: answerable[0].id } : {}),
      choices: pending.map((p) => {
        const o = offlineOf(p);
        return {
          value: p.id,
          name: `${render.oneLine(p.agent)} · ${render.oneLine(p.session)} · ${render.oneLine(p.data['kind'])}: ${preview(p.data['prompt'])}`,
          ...(o ? { disabled: `agent offline since ${render.oneLine(o.since)}` } : {}),
        };
      }),
    });
    req = pending.find((p) => p.id === id);
  }
  if (!req) return;
  const via = req.data['respond_via'];
  if (Array.isArray(via) && !via.includes('control')) {
    throw new CliError(
      'AEP_CLI_OUT_OF_BAND',
      `request ${render.oneLine(req.id)} is answered out of band (respond_via ${render.oneLine(JSON.stringify(via))}); it cannot be answered from here (AEP-0008 §2)`,
    );
  }
  const isForm = Array.isArray(req.data['fields']);
  if (refusal !== undefined) {
    if (!isForm)
      throw new CliError(
        'AEP_CLI_USAGE',
        `--${refusal} answers a form; request ${render.oneLine(req.id)} is a ${render.oneLine(req.data['kind'])} request: choose one of its options (${aep} answer ${render.oneLine(req.id)}, or ${aep} respond ${render.oneLine(req.id)} --option …)`,
      );
    process.stdout.write(render.renderRequest(req, { aep, hints: false, fields: false }) + '\n');
    const result = await sendAnswer({
      url,
      ...(opts.token ? { token: opts.token } : {}),
      requestId: req.id,
      session: req.session,
      answer: { option: refusal },
      ackWindowMs,
      agent: opts.agent,
      event: req.event,
    });
    await printResult(result, false);
    process.exitCode = exitFor(result.status);
    return;
  }
  const prompts = await import('@inquirer/prompts');
  process.stdout.write(render.renderRequest(req, { aep, hints: false, fields: false }) + '\n');
  let previous: Record<string, unknown> = {};
  for (let round = 0; round < 20; round++) {
    const { answer, proof } = await ask(prompts, render, req, previous);
    const result = await sendAnswer({
      url,
      ...(opts.token ? { token: opts.token } : {}),
      requestId: req.id,
      session: req.session,
      answer,
      ackWindowMs,
      agent: opts.agent,
      event: req.event,
      ...(proof !== undefined ? { proof } : {}),
    });
    await printResult(result, false);
    if (result.status === 'accepted' && proof !== undefined)
      await (await import('./delegate.js')).offerGrant({ url, ...(opts.token ? { token: opts.token } : {}), event: req.event, agent: opts.agent, prompts });
    if (result.status === 'rejected' && result.reason === 'invalid') {
      process.stdout.write('The agent rejected this answer; please correct it.\n');
      previous = answer.values ?? {};
      continue;
    }
    process.exitCode = exitFor(result.status);
    return;
  }
}

type Prompts = typeof PromptsModule;

interface Asked {
  answer: { option?: string; text?: string; values?: Record<string, unknown> };
  proof?: string;
}

async function ask(p: Prompts, render: Render, req: PendingAttention, previous: Record<string, unknown>): Promise<Asked> {
  const fields = Array.isArray(req.data['fields']) ? (req.data['fields'] as FieldSpec[]) : undefined;
  if (fields) {
    // Contract C2: decline and cancel on every form, offered before the first field.
    const how = await p.select({
      message: 'This form',
      choices: [{ value: ANSWER_FORM, name: 'Answer it' }, ...REFUSALS.map((r) => ({ value: r.value, name: r.name }))],
    });
    if (how !== ANSWER_FORM) return { answer: { option: how } };
    return { answer: { values: await askForm(p, render, fields, previous) } };
  }
  const { approvalView, approvalProof } = await import('@aep/protocol');
  const view = approvalView(req.event);
  if (view.options.length > 0) {
    // Each choice says what it does (from its id), next to the agent's label; a permissive one
    // is disabled unless the complete approval text reached this terminal (contract C1).
    const offered = view.options.filter((o) => o.offer);
    if (offered.length === 0) {
      throw new CliError(
        'AEP_CLI_APPROVAL_INCOMPLETE',
        `request ${render.oneLine(req.id)} offers nothing but options that need the complete input, which does not reach this terminal: answer on the agent's machine`,
      );
    }
    const option = await p.select({
      // The cursor starts on an offered option; a disabled one cannot be selected.
      ...(offered.length < view.options.length ? { default: offered[0]?.id } : {}),
      message: view.flagged ? 'Your decision (⚠ a label contradicts what it does: read the effect)' : 'Your decision',
      choices: view.options.map((o) => ({
        value: o.id,
        name: `${render.oneLine(o.label)}  → ${render.effectWord(o.effect)} [${render.oneLine(o.id)}]${o.contradicts ? '  ⚠ label contradicts the effect' : ''}`,
        ...(o.offer ? {} : { disabled: "not offered: the complete input is not shown here; answer on the agent's machine" }),
      })),
    });
    const text = await p.input({ message: 'Reason (optional)' });
    const chosen = view.options.find((o) => o.id === option);
    const proof = view.required && chosen?.effect === 'allow' && view.complete && view.text !== undefined ? approvalProof(req.id, view.text) : undefined;
    return { answer: text.trim() ? { option, text } : { option }, ...(proof !== undefined ? { proof } : {}) };
  }
  return { answer: { text: await p.input({ message: 'Your answer', required: true }) } };
}

/** One prompt per field (AEP-0006 §2), in order; returns the `values` map (skipped optional fields absent). */
async function askForm(p: Prompts, render: Render, fields: FieldSpec[], previous: Record<string, unknown>): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const f of fields) {
    const message = `${render.oneLine(f.label)}${f.required ? ' *' : ''}`;
    const prev = previous[f.id];
    if (f.type === 'string') {
      const v = await p.input({ message, required: f.required === true, ...(typeof prev === 'string' ? { default: prev } : {}) });
      if (v !== '' || f.required) values[f.id] = v;
    } else if (f.type === 'number') {
      const range = f.min !== undefined || f.max !== undefined ? ` (${f.min ?? '…'}–${f.max ?? '…'})` : '';
      const v = await p.number({
        message: message + range,
        required: f.required === true,
        step: 'any',
        ...(f.min !== undefined ? { min: f.min } : {}),
        ...(f.max !== undefined ? { max: f.max } : {}),
        ...(typeof prev === 'number' ? { default: prev } : {}),
      });
      if (v !== undefined) values[f.id] = v;
    } else if (f.type === 'boolean') {
      const choices = [{ value: 'yes', name: 'Yes' }, { value: 'no', name: 'No' }, ...(f.required ? [] : [{ value: SKIP, name: '(skip)' }])];
      const v = await p.select({ message, choices, ...(typeof prev === 'boolean' ? { default: prev ? 'yes' : 'no' } : {}) });
      if (v !== SKIP) values[f.id] = v === 'yes';
    } else {
      const choices = (f.choices ?? []).map((c) => ({ value: c.id, name: render.oneLine(c.label) }));
      const ids = new Set(choices.map((c) => c.value));
      if (f.multi) {
        const prevList = Array.isArray(prev) ? prev.filter((x): x is string => typeof x === 'string') : [];
        const picked = await p.checkbox({
          message,
          required: f.required === true,
          choices: [
            ...choices.map((c) => ({ ...c, checked: prevList.includes(c.value) })),
            ...(f.other ? [{ value: OTHER, name: 'Other…', checked: prevList.some((x) => !ids.has(x)) }] : []),
          ],
        });
        const out = picked.filter((x) => x !== OTHER);
        if (picked.includes(OTHER)) {
          const t = await p.input({
            message: `${render.oneLine(f.label)}: other`,
            required: true,
            ...(prevList.find((x) => !ids.has(x)) ? { default: prevList.find((x) => !ids.has(x)) } : {}),
          });
          out.push(t);
        }
        if (out.length > 0 || f.required) values[f.id] = out;
      } else {
        const extra = [...(f.other ? [{ value: OTHER, name: 'Other…' }] : []), ...(f.required ? [] : [{ value: SKIP, name: '(skip)' }])];
        const def = typeof prev === 'string' ? (ids.has(prev) ? prev : f.other ? OTHER : undefined) : undefined;
        const v = await p.select({ message, choices: [...choices, ...extra], ...(def !== undefined ? { default: def } : {}) });
        if (v === OTHER) {
          values[f.id] = await p.input({
            message: `${render.oneLine(f.label)}: other`,
            required: true,
            ...(typeof prev === 'string' && !ids.has(prev) ? { default: prev } : {}),
          });
        } else if (v !== SKIP) {
          values[f.id] = v;
        }
      }
    }
  }
  return values;
}
