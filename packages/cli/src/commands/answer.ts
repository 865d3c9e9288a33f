import type { Command } from 'commander';
import type { FieldSpec, PendingAttention } from '@aep/client';
import type * as PromptsModule from '@inquirer/prompts';
import { action, CliError } from '../util/errors.js';
import { EXIT } from '../util/exit.js';
import { addRelayOptions, clean, exitFor, mapClientError, positiveInt, printResult, relayUrl, sendRespond } from './respond.js';

interface AnswerOpts {
  relay?: string;
  token?: string;
  ackWindow: string;
  agent: string;
}

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
    .addHelpText('after', `
Renders every form field type: text, number (min/max enforced), yes/no, single select,
multi select (space toggles, enter confirms), and "Other…" free text where the field allows
it. Required fields are marked with *. When the agent rejects the answer, the issues are shown
and the form is asked again with your previous answers as defaults.
Needs a terminal: with piped stdin it prints the non-interactive command (aep respond) and
exits 2. Exit codes: 0 accepted, 2 usage / no terminal, 3 refused, 4 no ack, 5 unreachable.`);
  addRelayOptions(cmd).action(action(async (requestId: string | undefined, opts: AnswerOpts) => {
    try {
      await run(requestId, opts);
    } catch (err) {
      // Ctrl-C / Ctrl-D inside a prompt: nothing was sent for the current round.
      if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) {
        throw new CliError('AEP_CLI_CANCELLED', 'cancelled; the answer being edited was not sent', EXIT.USAGE);
      }
      throw err;
    }
  }));
}

async function run(requestId: string | undefined, opts: AnswerOpts): Promise<void> {
  const url = relayUrl(opts.relay);
  const ackWindowMs = positiveInt('--ack-window', opts.ackWindow);
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    const id = requestId ? clean(requestId) : 'REQUEST_ID';
    process.stderr.write([
      'aep answer needs an interactive terminal (stdin/stdout is not a TTY).',
      'Answer non-interactively instead:',
      `  aep respond ${id} --values '{"<field id>": <value>, …}'   # a form (AEP-0006)`,
      `  aep respond ${id} --option <option id> [--text "reason"]  # a permission or choice`,
      `  aep respond ${id} --text "…"                              # free text`,
      'List pending requests with: aep inbox',
      '',
    ].join('\n'));
    throw new CliError('AEP_CLI_NOT_A_TTY', 'stdin is not a terminal; use aep respond', EXIT.USAGE);
  }
  const { listPending } = await import('@aep/client');
  let pending: PendingAttention[];
  try {
    pending = await listPending({ url, ...(opts.token ? { token: opts.token } : {}) });
  } catch (err) {
    mapClientError(err);
  }
  const prompts = await import('@inquirer/prompts');
  let req: PendingAttention | undefined;
  if (requestId) {
    req = pending.find((p) => p.id === requestId);
    if (!req) throw new CliError('AEP_CLI_UNKNOWN_REQUEST', `no pending attention request ${clean(requestId)} (see: aep inbox)`, EXIT.USAGE);
  } else if (pending.length === 0) {
    process.stdout.write('no pending attention requests\n');
    return;
  } else if (pending.length === 1) {
    req = pending[0];
  } else {
    const id = await prompts.select({
      message: 'Which request?',
      choices: pending.map((p) => ({ value: p.id, name: `${clean(p.agent)} · ${clean(p.session)} · ${clean(p.data['kind'])}: ${clean(p.data['prompt']).slice(0, 70)}` })),
    });
    req = pending.find((p) => p.id === id);
  }
  if (!req) return;
  const via = req.data['respond_via'];
  if (Array.isArray(via) && !via.includes('control')) {
    throw new CliError('AEP_CLI_OUT_OF_BAND', `request ${req.id} is answered out of band (respond_via ${JSON.stringify(via)}); it cannot be answered from here (AEP-0008 §2)`, EXIT.USAGE);
  }
  process.stdout.write(`${clean(req.agent)} · session ${clean(req.session)} · ${clean(req.data['kind'])} · capture ${clean(req.capture)}\n`);
  process.stdout.write(`  ${clean(req.data['prompt'])}\n`);
  let previous: Record<string, unknown> = {};
  for (let round = 0; round < 20; round++) {
    const answer = await ask(prompts, req, previous);
    const result = await sendRespond({ url, ...(opts.token ? { token: opts.token } : {}), requestId: req.id, session: req.session, answer, ackWindowMs, agent: opts.agent });
    printResult(result, false);
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

async function ask(p: Prompts, req: PendingAttention, previous: Record<string, unknown>): Promise<{ option?: string; text?: string; values?: Record<string, unknown> }> {
  const fields = Array.isArray(req.data['fields']) ? (req.data['fields'] as FieldSpec[]) : undefined;
  if (fields) return { values: await askForm(p, fields, previous) };
  const options = Array.isArray(req.data['options']) ? (req.data['options'] as { id: string; label: string }[]) : undefined;
  if (options && options.length > 0) {
    const option = await p.select({ message: 'Your decision', choices: options.map((o) => ({ value: o.id, name: clean(o.label) })) });
    const text = await p.input({ message: 'Reason (optional)' });
    return text.trim() ? { option, text } : { option };
  }
  return { text: await p.input({ message: 'Your answer', required: true }) };
}

/** One prompt per field (AEP-0006 §2), in order; returns the `values` map (skipped optional fields absent). */
async function askForm(p: Prompts, fields: FieldSpec[], previous: Record<string, unknown>): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const f of fields) {
    const message = `${clean(f.label)}${f.required ? ' *' : ''}`;
    const prev = previous[f.id];
    if (f.type === 'string') {
      const v = await p.input({ message, required: f.required === true, ...(typeof prev === 'string' ? { default: prev } : {}) });
      if (v !== '' || f.required) values[f.id] = v;
    } else if (f.type === 'number') {
      const range = f.min !== undefined || f.max !== undefined ? ` (${f.min ?? '…'}–${f.max ?? '…'})` : '';
      const v = await p.number({
        message: message + range, required: f.required === true, step: 'any',
        ...(f.min !== undefined ? { min: f.min } : {}), ...(f.max !== undefined ? { max: f.max } : {}),
        ...(typeof prev === 'number' ? { default: prev } : {}),
      });
      if (v !== undefined) values[f.id] = v;
    } else if (f.type === 'boolean') {
      const choices = [{ value: 'yes', name: 'Yes' }, { value: 'no', name: 'No' }, ...(f.required ? [] : [{ value: SKIP, name: '(skip)' }])];
      const v = await p.select({ message, choices, ...(typeof prev === 'boolean' ? { default: prev ? 'yes' : 'no' } : {}) });
      if (v !== SKIP) values[f.id] = v === 'yes';
    } else {
      const choices = (f.choices ?? []).map((c) => ({ value: c.id, name: clean(c.label) }));
      const ids = new Set(choices.map((c) => c.value));
      if (f.multi) {
        const prevList = Array.isArray(prev) ? prev.filter((x): x is string => typeof x === 'string') : [];
        const picked = await p.checkbox({
          message, required: f.required === true,
          choices: [
            ...choices.map((c) => ({ ...c, checked: prevList.includes(c.value) })),
            ...(f.other ? [{ value: OTHER, name: 'Other…', checked: prevList.some((x) => !ids.has(x)) }] : []),
          ],
        });
        const out = picked.filter((x) => x !== OTHER);
        if (picked.includes(OTHER)) {
          const t = await p.input({ message: `${clean(f.label)}: other`, required: true, ...(prevList.find((x) => !ids.has(x)) ? { default: prevList.find((x) => !ids.has(x)) } : {}) });
          out.push(t);
        }
        if (out.length > 0 || f.required) values[f.id] = out;
      } else {
        const extra = [...(f.other ? [{ value: OTHER, name: 'Other…' }] : []), ...(f.required ? [] : [{ value: SKIP, name: '(skip)' }])];
        const def = typeof prev === 'string' ? (ids.has(prev) ? prev : f.other ? OTHER : undefined) : undefined;
        const v = await p.select({ message, choices: [...choices, ...extra], ...(def !== undefined ? { default: def } : {}) });
        if (v === OTHER) {
          values[f.id] = await p.input({ message: `${clean(f.label)}: other`, required: true, ...(typeof prev === 'string' && !ids.has(prev) ? { default: prev } : {}) });
        } else if (v !== SKIP) {
          values[f.id] = v;
        }
      }
    }
  }
  return values;
}
