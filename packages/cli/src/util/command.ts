// Commands the CLI sends (control.attention.respond, control.cancel|pause|resume): built here so
// that the capture label is honest (issue 12 item 1) and extension attributes such as
// `approvalproof` ride on them (contract C1). Loaded lazily (imports @aep/protocol and the SDK).
import { homedir, hostname } from 'node:os';
import { captureRank, createEmitter, gateFormValues, redact, redactValue, type CaptureLevel, type ExtensionValue, type FieldSpec } from '@aep/protocol';
import type { CommandResult, WireEvent } from '@aep/client';
import { CliError } from './errors.js';
import { mapClientError } from './relay.js';

/** The §9.4 pipeline as the CLI runs it: the person's home directory counts as a home prefix. */
function redaction(): { home: string } {
  return { home: homedir() };
}

/** A piece of free text in a command, with where it sits (for messages). */
interface FreeText {
  path: string;
  value: unknown;
}

/**
 * Free text of an answer, by what each value is (not by what the sender hopes): `text` always;
 * a form value is structural only when the request's fields say so (a number/boolean typed as
 * such, a closed-choice id of a select), so without the fields every string, array or object is
 * free text (fail closed).
 */
export function answerFreeText(answer: { text?: string; values?: Record<string, unknown> }, fields?: readonly FieldSpec[]): FreeText[] {
  const out: FreeText[] = [];
  if (answer.text !== undefined) out.push({ path: '/data/answer/text', value: answer.text });
  if (answer.values !== undefined) {
    const structural = fields
      ? gateFormValues(fields, answer.values, 'metadata')
      : Object.fromEntries(Object.entries(answer.values).filter(([, v]) => (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean'));
    for (const [k, v] of Object.entries(answer.values)) {
      if (!Object.prototype.hasOwnProperty.call(structural, k)) out.push({ path: `/data/answer/values/${k}`, value: v });
    }
  }
  return out;
}

/** What the §9.4 pipeline makes of a value (strings redacted; credential-named keys replaced). */
function pipeline(v: unknown): unknown {
  return typeof v === 'string' ? redact(v, redaction()) : redactValue(v, redaction());
}

/** The capture level a command's free text needs, and whether the pipeline would change it. */
export interface CaptureChoice {
  capture: CaptureLevel;
  /** Free text was passed through the pipeline (an explicit `--capture redacted` over text it changes). */
  redacted: boolean;
  /** Human note for stderr, when the label is not the obvious one. */
  note?: string;
}

/**
 * The honest label of a command: `metadata` with no free text; `redacted` when the §9.4 pipeline
 * leaves every free text unchanged (the text already is what `redacted` promises); `full` when
 * the pipeline would change it (a key, a home path, an address: the target needs the exact
 * value, and every reader below `full` gets the command down-levelled by the relay). An explicit
 * `--capture` at or above that is kept; `--capture redacted` over text the pipeline changes sends
 * the redacted text; below what free text needs is refused (`AEP_CLI_CAPTURE_TOO_LOW`).
 */
export function chooseCapture(free: readonly FreeText[], explicit?: CaptureLevel): CaptureChoice {
  const changed = free.filter((f) => JSON.stringify(pipeline(f.value)) !== JSON.stringify(f.value));
  const need: CaptureLevel = free.length === 0 ? 'metadata' : changed.length > 0 ? 'full' : 'redacted';
  if (explicit === 'none')
    throw new CliError('AEP_CLI_CAPTURE_TOO_LOW', '--capture none: a command at capture none carries no data, so the answer would be lost (AEP-0001 §8)');
  if (explicit === undefined) {
    return need === 'full'
      ? {
          capture: 'full',
          redacted: false,
          note: `the command carries text the redaction pipeline would change (${changed.map((c) => c.path).join(', ')}): sent at capture full, so readers below full never see it`,
        }
      : { capture: need, redacted: false };
  }
  if (captureRank(explicit) >= captureRank(need)) return { capture: explicit, redacted: false };
  if (explicit === 'redacted') {
    return {
      capture: 'redacted',
      redacted: true,
      note: `--capture redacted: the redaction pipeline changed ${changed.map((c) => c.path).join(', ')}; the target receives the redacted text`,
    };
  }
  throw new CliError(
    'AEP_CLI_CAPTURE_TOO_LOW',
    `--capture ${explicit} cannot carry free text (${free.map((f) => f.path).join(', ')}): use --capture redacted or full, or leave --capture out`,
  );
}

/** The answer as sent under a choice (free text through the pipeline when `redacted` is set). */
export function applyChoice<T extends { text?: string; values?: Record<string, unknown> }>(answer: T, free: readonly FreeText[], choice: CaptureChoice): T {
  if (!choice.redacted) return answer;
  const out: T = { ...answer };
  if (out.text !== undefined) out.text = redact(out.text, redaction());
  if (out.values !== undefined) {
    const values = { ...out.values };
    for (const f of free) {
      const key = f.path.startsWith('/data/answer/values/') ? f.path.slice('/data/answer/values/'.length) : undefined;
      if (key !== undefined) values[key] = pipeline(values[key]);
    }
    out.values = values;
  }
  return out;
}

/** Envelope input of a command (no `seq`: the sender does not own the target session, AEP-0004 §2). */
export interface CommandInput {
  type: string;
  session: string;
  agent: string;
  data?: Record<string, unknown>;
  capture: CaptureLevel;
  subject?: string;
  cause?: string;
  run?: string;
  extensions?: Record<string, ExtensionValue>;
}

/** Builds a command envelope with the same source the SDK's CommandSender uses. */
export function buildCommand(c: CommandInput): WireEvent {
  const source = `aep://${hostname() || 'localhost'}/agent/${encodeURIComponent(c.agent)}`;
  return createEmitter({ source, agent: c.agent }).build({
    type: c.type,
    session: c.session,
    capture: c.capture,
    ...(c.data !== undefined ? { data: c.data } : {}),
    ...(c.subject !== undefined ? { subject: c.subject } : {}),
    ...(c.cause !== undefined ? { cause: c.cause } : {}),
    ...(c.run !== undefined ? { run: c.run } : {}),
    ...(c.extensions !== undefined ? { extensions: c.extensions } : {}),
  }) as unknown as WireEvent;
}

/** How to reach the relay to send a command. */
export interface SendOptions {
  url: string;
  token?: string;
  agent: string;
  ackWindowMs?: number;
  retries?: number;
}

/** Sends one command and waits for its ack (or a cause-matched refusal); SDK failures become CLI errors. */
export async function sendCommand(o: SendOptions, command: WireEvent): Promise<CommandResult> {
  const client = await import('@aep/client/node');
  let sender: InstanceType<typeof client.CommandSender> | undefined;
  try {
    sender = await client.CommandSender.connect({
      url: o.url,
      ...(o.token ? { token: o.token } : {}),
      agent: o.agent,
      ...(o.ackWindowMs ? { ackWindowMs: o.ackWindowMs } : {}),
      ...(o.retries !== undefined ? { retries: o.retries } : {}),
    });
    return await sender.send(command);
  } catch (err) {
    return mapClientError(err, o.url);
  } finally {
    await sender?.close();
  }
}
