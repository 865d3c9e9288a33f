// The AEP side of `aep mcp wrap`: one emitter connection, one session per wrapped server, and the
// attention lifecycle of the elicitations asked through it (AEP-0002 §7, AEP-0004 §5.3, AEP-0006).
//
// The lifecycle itself is the client's AttentionEngine (one implementation for every emitter):
// this file raises the mapped requests with their pinned data, member for member (AEP-0002 Annex A:
// `{kind, prompt, fields, respond_via}` and nothing else), lets the engine accept the
// `decline`/`cancel` answer options every form accepts without listing them (contract C2,
// `FORM_REFUSAL_OPTIONS`), and hands it the MCP constraints an AEP form cannot carry (integer,
// lengths, format, item counts) as data, so the engine alone decides validity; the validate
// hook only restores MCP types (docs/decisions.md "MCP bridge", "One answer path").
import { AttentionEngine, EmitterConnection } from '@aep/client/node';
import type { Answer, AnswerCheck, AttentionOutcome, AttentionPort, AttentionPromise, CommandDecision, EmitAttributes, IncomingCommand } from '@aep/client';
import { FORM_CANCEL_OPTION, FORM_DECLINE_OPTION, captureRank, redact, synthesizePrompt } from '@aep/protocol';
import type { CaptureLevel, ElicitationContentValue, ElicitationFormData, FieldSpec, FormConstraints, RedactOptions } from '@aep/protocol';
import type { AepPort, AskHandle, AskOutcome, FormAsk, SteerHandler, SteerReport, UrlAsk } from './bridge.js';
import { BRIDGE_ACCEPTS, checkCancel } from './steering.js';
import { checkElicitationAnswer } from './answers.js';

/** Options of {@link AepSide}. */
export interface AepSideOptions {
  /** Relay base URL. */
  relay: string;
  /** Bearer token (needed for answers: commands flow only on authenticated bindings, AEP-0004 §4.1). */
  token?: string;
  /** Agent name (`agent` of every event). */
  agent: string;
  /** Session id of this wrapped server. */
  session: string;
  /** Capture level of the requests (prompt/labels real text at `redacted`+). */
  capture: CaptureLevel;
  /** How long to wait for the first `hello` before starting without AEP (it keeps retrying). */
  connectTimeoutMs?: number;
  /** Options of the AEP-0003 §9.4 pipeline at `redacted`. */
  redaction?: RedactOptions;
  /** `session.started.client` (the MCP server's implementation info, when known later it is not re-sent). */
  clientName?: string;
  log?: (line: string) => void;
}

const DECLINE = FORM_DECLINE_OPTION;
const CANCEL = FORM_CANCEL_OPTION;
const ACCEPT = 'accept';

/**
 * The AEP side: an {@link EmitterConnection} declaring `control.attention.respond` and
 * `control.cancel` (steering), one session, and the lifecycle of each question (requested ->
 * answered + resolved | timeout | dismissed).
 */
export class AepSide implements AepPort {
  readonly agent: string;
  readonly capture: CaptureLevel;
  private readonly conn: EmitterConnection;
  private readonly engine: AttentionEngine;
  private subject: string | undefined;
  private readonly startedAt = Date.now();
  private ended = false;
  private readonly log: (line: string) => void;
  /** The MCP side of `control.cancel` (registered by the bridge). */
  private steer: SteerHandler | undefined;
  /** While a cancel is applied: the command id every lifecycle event it causes is linked to. */
  private cancelCause: string | undefined;

  private constructor(private readonly opts: AepSideOptions) {
    this.agent = opts.agent;
    this.capture = opts.capture;
    this.log = opts.log ?? (() => {});
    this.conn = new EmitterConnection({
      url: opts.relay,
      ...(opts.token !== undefined ? { token: opts.token } : {}),
      agent: opts.agent,
      capture: opts.capture,
      control: { accepts: [...BRIDGE_ACCEPTS] },
      emits: ['session', 'attention', 'control', 'progress'],
      log: (line) => this.log(line),
    });
    this.conn.onCommand('control.cancel', (cmd) => this.onCancel(cmd));
    // The engine emits through this port so that the dismissals a person's cancel causes are
    // cause-linked to the command (AEP-0004 §6: outcome cause = command id), not to the request.
    const conn = this.conn;
    const port: AttentionPort = {
      ceiling: conn.ceiling,
      options: conn.options,
      emit: (session: string, type: string, data?: Record<string, unknown>, attrs?: EmitAttributes) =>
        conn.emit(session, type, data, this.cancelCause !== undefined && type.startsWith('attention.') ? { ...attrs, cause: this.cancelCause } : attrs),
      onCommand: (type, handler) => conn.onCommand(type, handler),
    };
    this.engine = new AttentionEngine(port, {
      capture: opts.capture,
      ...(opts.redaction ? { redact: opts.redaction } : {}),
      log: (line) => this.log(line),
      unrefTimers: true,
    });
  }

  /**
   * Connect (waiting up to `connectTimeoutMs`, default 3 000) and emit `session.started`. An
   * unreachable relay is not an error: the connection keeps retrying in the background and
   * {@link AepSide.available} stays false until it succeeds, so elicitations fall back meanwhile.
   */
  static async start(opts: AepSideOptions): Promise<AepSide> {
    const side = new AepSide(opts);
    try {
      await side.conn.waitReady(opts.connectTimeoutMs ?? 3_000);
    } catch {
      side.log('AEP relay unreachable for now; elicitations fall back to the host (or decline) until it is');
    }
    side.conn.emit(opts.session, 'session.started', { client: { name: opts.clientName ?? 'aep-mcp-bridge', version: '0.1.0' } });
    return side;
  }

  /** The envelope `subject` of later requests (the MCP server's name, an identifier). */
  setSubject(subject: string | undefined): void {
    this.subject = subject;
  }

  available(): boolean {
    return !this.ended && this.conn.stats().connected;
  }

  redact(text: string): string {
    return redact(text, this.opts.redaction ?? {});
  }

  askForm(ask: FormAsk): AskHandle {
    // The Annex A pin exactly: no `options`, no `expires_at` (the deadline is still enforced:
    // `attention.timeout` after `timeoutMs`); decline/cancel are accepted by the engine on every
    // form without being listed (contract C2) and come back as `outcome.refusal`.
    const data: Record<string, unknown> = { ...(ask.data as ElicitationFormData) };
    const schema = ask.requestedSchema;
    // Translation only: the engine already checked the values against fields + constraints.
    const validate = (answer: Answer): AnswerCheck => {
      const checked = checkElicitationAnswer(schema, answer.values);
      return checked.ok ? { ok: true, result: checked.content } : { ok: false, issues: checked.issues };
    };
    const p = this.raise({
      kind: 'form',
      data,
      fields: ask.data.fields as FieldSpec[],
      constraints: ask.constraints,
      options: [],
      timeoutMs: ask.timeoutMs,
      validate,
    });
    return this.handle(p, (o) =>
      o.refusal === 'decline'
        ? { action: 'decline' }
        : { action: 'accept', ...(o.result !== undefined ? { content: o.result as Record<string, ElicitationContentValue> } : {}) },
    );
  }

  askUrl(ask: UrlAsk): AskHandle {
    const textOK = captureRank(this.capture) >= captureRank('redacted');
    const real = `${ask.message}\n\nOpen this URL to continue: ${ask.url}`;
    const prompt = !textOK ? synthesizePrompt(this.agent, 'auth', this.subject) : this.capture === 'redacted' ? this.redact(real) : real;
    const data: Record<string, unknown> = {
      kind: 'auth',
      prompt,
      options: [
        { id: ACCEPT, label: textOK ? 'I will open the URL' : ACCEPT },
        { id: DECLINE, label: textOK ? 'Decline' : DECLINE },
        { id: CANCEL, label: textOK ? 'Cancel' : CANCEL },
      ],
      expires_at: new Date(Date.now() + ask.timeoutMs).toISOString(),
      respond_via: ['control'],
    };
    if (this.capture === 'full') data['context'] = { url: ask.url, elicitation_id: ask.elicitationId };
    const optionIds = [ACCEPT, DECLINE, CANCEL];
    // Text that names no option is not an answer to a URL question (AEP-0008 §1, never permissive).
    const validate = (answer: Answer): AnswerCheck =>
      answer.option !== undefined
        ? { ok: true, answer: { option: answer.option } }
        : {
            ok: false,
            issues: [
              {
                rule: 'control.respond.answer-shape',
                path: '/data/answer/text',
                message: `text answers must name one of: ${optionIds.join(', ')}`,
                section: 'AEP-0002 §5.3',
              },
            ],
          };
    const p = this.raise({ kind: 'auth', data, options: optionIds, timeoutMs: ask.timeoutMs, validate });
    return this.handle(p, (o) => optionOutcome(o.answer.option));
  }

  onSteer(handler: SteerHandler): void {
    this.steer = handler;
  }

  /**
   * `control.cancel` (AEP-0004 §5, README "Steering"): checked, acked, then applied after the ack
   * (AEP-0004 §1): the MCP side cancels what is in flight, every AEP request of the session still
   * open is dismissed, each dismissal and a closing `progress.status{phase:"cancelled"}` are
   * cause-linked to the command.
   */
  private onCancel({ event: cmd }: IncomingCommand): CommandDecision {
    const verdict = checkCancel(cmd, this.opts.session);
    if (!verdict.ok) return { status: 'rejected', reason: 'invalid', issues: verdict.issues, capture: this.capture };
    const steer = this.steer;
    if (!steer || this.ended)
      return { status: 'rejected', reason: 'busy', detail: 'the MCP bridge is not proxying (starting or stopping)', capture: this.capture };
    return {
      status: 'accepted',
      after: () => {
        let report: SteerReport = { elicitations: 0, requests: 0 };
        this.cancelCause = cmd.id;
        try {
          report = steer(verdict.reason !== undefined ? { reason: verdict.reason } : {});
          for (const id of this.engine.pending()) this.withdraw(id, 'cancelled by a person through AEP');
        } catch (err) {
          this.log(`steering: cancel failed: ${err instanceof Error ? err.message : String(err)}`);
        } finally {
          this.cancelCause = undefined;
        }
        this.recordCancelled(cmd.id, report);
      },
    };
  }

  /** The cancel's closing outcome: `progress.status{phase:"cancelled"}`, message at `redacted`+. */
  private recordCancelled(cause: string, report: SteerReport): void {
    const textOK = captureRank(this.capture) >= captureRank('redacted');
    const message = `cancelled by a person: ${report.elicitations} open question(s) answered "cancel", ${report.requests} MCP request(s) in flight cancelled; the MCP server keeps running`;
    try {
      this.conn.emit(
        this.opts.session,
        'progress.status',
        {
          phase: 'cancelled',
          ...(textOK ? { message: this.capture === 'redacted' ? this.redact(message) : message } : {}),
        },
        { cause, capture: this.capture },
      );
    } catch (err) {
      this.log(`steering: could not record the cancel: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** True when URL elicitations can be shown usefully: the URL needs `redacted`+ to reach a human. */
  urlCapable(): boolean {
    return captureRank(this.capture) >= captureRank('redacted');
  }

  /** Dismiss what is open, end the session (AEP-0002 §7.2: terminals before `session.ended`), flush and close. */
  async close(): Promise<void> {
    if (this.ended) return;
    for (const id of this.engine.pending()) this.withdraw(id, 'the MCP bridge is shutting down');
    this.ended = true;
    try {
      this.conn.emit(this.opts.session, 'session.ended', { reason: 'normal', duration_ms: Date.now() - this.startedAt });
    } catch {
      /* closed already */
    }
    await this.conn.close(2_000);
  }

  // ---- lifecycle (the client's AttentionEngine) -----------------------------------------------

  private raise(r: {
    kind: 'form' | 'auth';
    data: Record<string, unknown>;
    fields?: FieldSpec[];
    constraints?: FormConstraints;
    options: string[];
    timeoutMs: number;
    validate: (a: Answer) => AnswerCheck;
  }): AttentionPromise {
    return this.engine.requestAttention({
      session: this.opts.session,
      kind: r.kind,
      data: r.data,
      capture: this.capture,
      ...(r.fields ? { fields: r.fields } : {}),
      ...(r.constraints ? { constraints: r.constraints } : {}),
      // Labels as ids: text answers name an option by its id (case-insensitive, AEP-0008 §1).
      ...(r.options.length > 0 ? { options: r.options.map((id) => ({ id, label: id })) } : {}),
      expiresInMs: r.timeoutMs,
      ...(this.subject !== undefined ? { subject: this.subject } : {}),
      validate: r.validate,
    });
  }

  /**
   * The bridge's view of one engine request: its outcome as an MCP action, and withdrawal.
   * Expiry and a dismissal the bridge did not ask for (the engine records a person's `cancel` as
   * `attention.resolved{dismissed}` once it implements contract C2 that way) are `cancel`: the
   * request closed without an answer (README "Outcome mapping").
   */
  private handle(p: AttentionPromise, answered: (o: Extract<AttentionOutcome, { status: 'answered' }>) => AskOutcome): AskHandle {
    const outcome = p.then((o): AskOutcome =>
      o.status === 'answered' ? answered(o) : { action: 'cancel', why: o.status === 'timeout' ? 'timeout' : o.refusal === 'cancel' ? 'cancel' : 'dismissed' },
    );
    return { id: p.id, outcome, withdraw: (reason) => this.withdraw(p.id, reason) };
  }

  private withdraw(id: string, reason: string): void {
    if (this.engine.dismiss(id, reason)) this.log(`AEP request ${id} dismissed: ${reason}`);
  }
}

/** An option answer as the MCP `ElicitResult.action` (README "Outcome mapping"). */
function optionOutcome(option: string | undefined): AskOutcome {
  return option === DECLINE ? { action: 'decline' } : option === ACCEPT ? { action: 'accept' } : { action: 'cancel', why: 'cancel' };
}
