// The AEP side of `aep mcp wrap`: one emitter connection, one session per wrapped server, and the
// attention lifecycle of the elicitations asked through it (AEP-0002 §7, AEP-0004 §5.3, AEP-0006).
//
// The lifecycle itself is the client's AttentionEngine (one implementation for every emitter):
// this file raises the mapped requests with their pinned data (brief 03 §7), declares the
// `decline`/`cancel` options a human may answer a form with, and adds the MCP constraints an AEP
// form cannot carry (integer, lengths, format, item counts) as a validate hook that nacks
// `invalid` (docs/decisions.md "MCP bridge").
import { AttentionEngine, EmitterConnection } from '@aep/client/node';
import type { Answer, AnswerCheck, AttentionPromise } from '@aep/client';
import { captureRank, formValuesToElicitationContent, redact, synthesizePrompt, validateElicitationContent } from '@aep/protocol';
import type { CaptureLevel, ElicitationContentValue, ElicitationFormData, FieldSpec, RedactOptions } from '@aep/protocol';
import type { AepPort, AskHandle, AskOutcome, FormAsk, UrlAsk } from './bridge.js';

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

const DECLINE = 'decline';
const CANCEL = 'cancel';
const ACCEPT = 'accept';

/**
 * The AEP side: an {@link EmitterConnection} declaring `control.attention.respond`, one session,
 * and the lifecycle of each question (requested -> answered + resolved | timeout | dismissed).
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

  private constructor(private readonly opts: AepSideOptions) {
    this.agent = opts.agent;
    this.capture = opts.capture;
    this.log = opts.log ?? (() => {});
    this.conn = new EmitterConnection({
      url: opts.relay,
      ...(opts.token !== undefined ? { token: opts.token } : {}),
      agent: opts.agent,
      capture: opts.capture,
      control: { accepts: ['control.attention.respond'] },
      emits: ['session', 'attention', 'control'],
      log: (line) => this.log(line),
    });
    this.engine = new AttentionEngine(this.conn, {
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
    const textOK = captureRank(this.capture) >= captureRank('redacted');
    const data: Record<string, unknown> = {
      ...(ask.data as ElicitationFormData),
      options: [
        { id: DECLINE, label: textOK ? 'Decline' : DECLINE },
        { id: CANCEL, label: textOK ? 'Cancel' : CANCEL },
      ],
      expires_at: new Date(Date.now() + ask.timeoutMs).toISOString(),
      respond_via: ['control'],
    };
    const schema = ask.requestedSchema;
    let content: Record<string, ElicitationContentValue> | undefined;
    /** The MCP constraints an AEP form cannot carry, checked on the values the engine accepted. */
    const validate = (answer: Answer): AnswerCheck => {
      if (answer.values === undefined) return { answer: { option: answer.option ?? CANCEL } };
      const mapped = formValuesToElicitationContent(schema, answer.values);
      const issues = validateElicitationContent(schema, mapped).map((i) => ({ ...i, path: `/data/answer/values${i.path}` }));
      if (issues.length === 0) content = mapped;
      return issues;
    };
    const p = this.raise({ kind: 'form', data, fields: ask.data.fields as FieldSpec[], options: [DECLINE, CANCEL], timeoutMs: ask.timeoutMs, validate });
    return this.handle(p, (answer) => (answer.values !== undefined ? { action: 'accept', ...(content ? { content } : {}) } : optionOutcome(answer.option)));
  }

  askUrl(ask: UrlAsk): AskHandle {
    const textOK = captureRank(this.capture) >= captureRank('redacted');
    const real = `${ask.message}\n\nOpen this URL to continue: ${ask.url}`;
    const prompt = !textOK ? synthesizePrompt(this.agent, 'auth', this.subject)
      : this.capture === 'redacted' ? this.redact(real) : real;
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
    const validate = (answer: Answer): AnswerCheck => (answer.option !== undefined ? { answer: { option: answer.option } }
      : [{ rule: 'control.respond.answer-shape', path: '/data/answer/text', message: `text answers must name one of: ${optionIds.join(', ')}`, section: 'AEP-0002 §5.3' }]);
    const p = this.raise({ kind: 'auth', data, options: optionIds, timeoutMs: ask.timeoutMs, validate });
    return this.handle(p, (answer) => optionOutcome(answer.option));
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
    } catch { /* closed already */ }
    await this.conn.close(2_000);
  }

  // ---- lifecycle (the client's AttentionEngine) -----------------------------------------------

  private raise(r: { kind: 'form' | 'auth'; data: Record<string, unknown>; fields?: FieldSpec[]; options: string[]; timeoutMs: number; validate: (a: Answer) => AnswerCheck }): AttentionPromise {
    return this.engine.requestAttention({
      session: this.opts.session,
      kind: r.kind,
      data: r.data,
      capture: this.capture,
      ...(r.fields ? { fields: r.fields } : {}),
      // Labels as ids: text answers name an option by its id (case-insensitive, AEP-0008 §1).
      options: r.options.map((id) => ({ id, label: id })),
      expiresInMs: r.timeoutMs,
      ...(this.subject !== undefined ? { subject: this.subject } : {}),
      validate: r.validate,
    });
  }

  /** The bridge's view of one engine request: its outcome as an MCP action, and withdrawal. */
  private handle(p: AttentionPromise, answered: (answer: Answer) => AskOutcome): AskHandle {
    const outcome = p.then((o): AskOutcome => (o.status === 'answered' ? answered(o.answer)
      : { action: 'cancel', why: o.status === 'timeout' ? 'timeout' : 'dismissed' }));
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
