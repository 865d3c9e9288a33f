// The AEP side of `aep mcp wrap`: one emitter connection, one session per wrapped server, and the
// attention lifecycle of the elicitations asked through it (AEP-0002 §7, AEP-0004 §5.3, AEP-0006).
//
// Why not the client's AttentionEngine: an elicitation needs three things the engine does not
// offer (docs/decisions.md "MCP bridge"): the pinned structural prompt of the mapping
// (`"{agent} requests input ({n} fields)"`, brief 03 §7), a way for the human to decline or cancel
// a form (the `decline`/`cancel` options; the engine only accepts `values` on a form), and the MCP
// constraints an AEP form cannot carry (integer, lengths, format, item counts), which must nack
// `invalid` before the answer is accepted. Everything else is the same public protocol code the
// engine uses: validateFormAnswer, gateFormValues, redact, mapTextAnswer, synthesizePrompt.
import { EmitterConnection } from '@aep/client';
import type { CommandDecision, IncomingCommand, WireEvent } from '@aep/client';
import {
  captureRank, formValuesToElicitationContent, gateFormValues, mapTextAnswer, redact, synthesizePrompt,
  validateElicitationContent, validateFormAnswer,
} from '@aep/protocol';
import type { CaptureLevel, ElicitationFormData, FieldSpec, Issue, RedactOptions } from '@aep/protocol';
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

interface Open {
  id: string;
  kind: 'form' | 'url';
  fields: FieldSpec[];
  schema: unknown;
  optionIds: string[];
  createdAt: number;
  timer: NodeJS.Timeout;
  settle: (o: AskOutcome) => void;
}

const RULE = {
  unknown: 'control.respond.unknown-request',
  session: 'control.respond.wrong-session',
  shape: 'control.respond.answer-shape',
  option: 'control.respond.unknown-option',
} as const;

function issue(rule: string, path: string, message: string, section: string): Issue {
  return { rule, path, message, section };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The AEP side: an {@link EmitterConnection} declaring `control.attention.respond`, one session,
 * and the lifecycle of each question (requested -> answered + resolved | timeout | dismissed).
 */
export class AepSide implements AepPort {
  readonly agent: string;
  readonly capture: CaptureLevel;
  private readonly conn: EmitterConnection;
  private readonly open = new Map<string, Open>();
  /** Recently closed request ids (answers to them are refused, not "unknown"). */
  private readonly closedIds = new Map<string, string>();
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
    this.conn.onCommand('control.attention.respond', (cmd) => this.onRespond(cmd));
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
    return this.raise('form', data, ask.data.fields as FieldSpec[], ask.requestedSchema, [DECLINE, CANCEL], ask.timeoutMs);
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
    return this.raise('url', data, [], undefined, [ACCEPT, DECLINE, CANCEL], ask.timeoutMs);
  }

  /** True when URL elicitations can be shown usefully: the URL needs `redacted`+ to reach a human. */
  urlCapable(): boolean {
    return captureRank(this.capture) >= captureRank('redacted');
  }

  /** Dismiss what is open, end the session (AEP-0002 §7.2: terminals before `session.ended`), flush and close. */
  async close(): Promise<void> {
    if (this.ended) return;
    for (const id of [...this.open.keys()]) this.withdraw(id, 'the MCP bridge is shutting down');
    this.ended = true;
    try {
      this.conn.emit(this.opts.session, 'session.ended', { reason: 'normal', duration_ms: Date.now() - this.startedAt });
    } catch { /* closed already */ }
    await this.conn.close(2_000);
  }

  // ---- lifecycle -----------------------------------------------------------------------------

  private raise(kind: 'form' | 'url', data: Record<string, unknown>, fields: FieldSpec[], schema: unknown, optionIds: string[], timeoutMs: number): AskHandle {
    const event = this.conn.emit(this.opts.session, 'attention.requested', data, {
      capture: this.capture,
      severity: 'notice',
      ...(this.subject !== undefined ? { subject: this.subject } : {}),
    });
    let settle!: (o: AskOutcome) => void;
    const outcome = new Promise<AskOutcome>((resolve) => { settle = resolve; });
    const timer = setTimeout(() => this.expire(event.id), Math.max(0, timeoutMs));
    timer.unref?.();
    this.open.set(event.id, { id: event.id, kind, fields, schema, optionIds, createdAt: Date.now(), timer, settle });
    return { id: event.id, outcome, withdraw: (reason) => this.withdraw(event.id, reason) };
  }

  private take(id: string, how: string): Open | undefined {
    const o = this.open.get(id);
    if (!o) return undefined;
    this.open.delete(id);
    clearTimeout(o.timer);
    this.closedIds.set(id, how);
    if (this.closedIds.size > 10_000) {
      const first = this.closedIds.keys().next();
      if (!first.done) this.closedIds.delete(first.value);
    }
    return o;
  }

  private expire(id: string): void {
    const o = this.take(id, 'timed out');
    if (!o) return;
    // The MCP side must always learn the outcome, even if recording it fails.
    this.safeEmit(() => this.conn.emit(this.opts.session, 'attention.timeout', { after_ms: Date.now() - o.createdAt }, { subject: id, cause: id }));
    o.settle({ action: 'cancel', why: 'timeout' });
  }

  private withdraw(id: string, reason: string): void {
    const o = this.take(id, 'dismissed');
    if (!o) return;
    this.log(`AEP request ${id} dismissed: ${reason}`);
    this.safeEmit(() => this.conn.emit(this.opts.session, 'attention.resolved', { resolution: 'dismissed', latency_ms: Date.now() - o.createdAt }, { subject: id, cause: id }));
    o.settle({ action: 'cancel', why: 'dismissed' });
  }

  private safeEmit(fn: () => unknown): void {
    try { fn(); } catch (err) { this.log(`could not record an event: ${err instanceof Error ? err.message : String(err)}`); }
  }

  /** AEP-0004 §5.3: decide once; invalid answers are nacked and the request stays pending (AEP-0006 §4). */
  private onRespond({ event: cmd }: IncomingCommand): CommandDecision {
    const subject = cmd.subject;
    const o = typeof subject === 'string' ? this.open.get(subject) : undefined;
    if (!o) {
      const done = typeof subject === 'string' ? this.closedIds.get(subject) : undefined;
      if (done !== undefined) return { status: 'rejected', reason: 'refused', detail: `attention request ${String(subject)} is already ${done}`, capture: this.capture };
      return { status: 'rejected', reason: 'invalid', capture: this.capture, issues: [issue(RULE.unknown, '/subject', 'subject names no pending attention request of this emitter', 'AEP-0004 §5.3')] };
    }
    if (cmd.session !== this.opts.session) {
      return { status: 'rejected', reason: 'invalid', capture: this.capture, issues: [issue(RULE.session, '/session', 'the command names another session than the request', 'AEP-0004 §2')] };
    }
    const answer = isObject(cmd.data) ? cmd.data['answer'] : undefined;
    const decided = this.evaluate(o, answer);
    if (!decided.ok) return { status: 'rejected', reason: 'invalid', issues: decided.issues, capture: this.capture };
    this.take(o.id, 'answered');
    return { status: 'accepted', after: () => this.record(o, cmd, decided.recorded, decided.outcome) };
  }

  private evaluate(o: Open, raw: unknown): { ok: true; recorded: Record<string, unknown>; outcome: AskOutcome } | { ok: false; issues: Issue[] } {
    const shape = (path: string, msg: string) => ({ ok: false as const, issues: [issue(RULE.shape, path, msg, 'AEP-0002 §5.3')] });
    if (!isObject(raw)) return shape('/data/answer', 'answer must be an object');
    let option = raw['option'];
    const text = raw['text'];
    const values = raw['values'];
    if (option !== undefined && typeof option !== 'string') return shape('/data/answer/option', 'answer.option must be a string');
    if (text !== undefined && typeof text !== 'string') return shape('/data/answer/text', 'answer.text must be a string');
    if (option === undefined && values === undefined && typeof text === 'string') {
      // AEP-0008 §1: text naming an option (id or label, case-insensitive) chooses it.
      const mapped = mapTextAnswer({ kind: 'other', options: o.optionIds.map((id) => ({ id, label: id })) }, text, { otherUnmatched: 'invalid' });
      if (mapped.option === undefined) return shape('/data/answer/text', `text answers must name one of: ${o.optionIds.join(', ')}`);
      option = mapped.option;
    }
    if (typeof option === 'string') {
      if (!o.optionIds.includes(option)) return { ok: false, issues: [issue(RULE.option, '/data/answer/option', 'answer.option is not one of the request options', 'AEP-0002 §5.3')] };
      const outcome: AskOutcome = option === DECLINE ? { action: 'decline' } : option === CANCEL ? { action: 'cancel', why: 'cancel' } : { action: 'accept' };
      return { ok: true, recorded: { option }, outcome };
    }
    if (o.kind !== 'form') return shape('/data/answer', `answer with option ${o.optionIds.join(' | ')}`);
    if (values === undefined) return shape('/data/answer/values', 'a form is answered with answer.values (or option decline/cancel)');
    const formIssues = validateFormAnswer(o.fields, values);
    if (formIssues.length > 0) return { ok: false, issues: formIssues };
    const content = formValuesToElicitationContent(o.schema, values);
    const mcpIssues = validateElicitationContent(o.schema, content).map((i) => ({ ...i, path: `/data/answer/values${i.path}` }));
    if (mcpIssues.length > 0) return { ok: false, issues: mcpIssues };
    return { ok: true, recorded: { values }, outcome: { action: 'accept', content } };
  }

  /** `attention.answered` (values gated to the request's capture) then `attention.resolved{answered}`. */
  private record(o: Open, cmd: WireEvent, recorded: Record<string, unknown>, outcome: AskOutcome): void {
    const answer: Record<string, unknown> = {};
    if (recorded['option'] !== undefined) answer['option'] = recorded['option'];
    if (recorded['values'] !== undefined) {
      const gated = gateFormValues(o.fields, recorded['values'], this.capture);
      if (this.capture === 'redacted') {
        for (const f of o.fields) {
          const v = gated[f.id];
          if (f.type === 'string' && typeof v === 'string') Object.defineProperty(gated, f.id, { value: this.redact(v), enumerable: true, writable: true, configurable: true });
        }
      }
      answer['values'] = gated;
    }
    this.safeEmit(() => {
      const answered = this.conn.emit(this.opts.session, 'attention.answered', { answer, by: cmd.agent, via: 'control' }, {
        subject: o.id, cause: cmd.id, capture: this.capture,
      });
      this.conn.emit(this.opts.session, 'attention.resolved', { resolution: 'answered', latency_ms: Date.now() - o.createdAt }, {
        subject: o.id, cause: answered.id,
      });
    });
    o.settle(outcome);
  }
}
