// The emitter-side attention engine (AEP-0002 §7, AEP-0004 §5.3, AEP-0006, AEP-0008).
import type { CaptureLevel, Issue } from '@aep/protocol';
import { clampCapture } from './build.js';
import { buildAttentionRequestData, gateAnswer, mapTextAnswer, validateFormAnswer } from './proto.js';
import type {
  Answer, AttentionEngineOptions, AttentionLifecycleType, AttentionOutcome, AttentionPort, AttentionPromise,
  AttentionRequestInput, CommandDecision, EmitAttributes, FieldSpec, IncomingCommand, WireEvent,
} from './types.js';
import { BoundedMap, isObject } from './util.js';

interface PendingRequest {
  id: string;
  session: string;
  kind: AttentionRequestInput['kind'];
  fields: FieldSpec[] | undefined;
  options: { id: string; label: string }[] | undefined;
  capture: CaptureLevel;
  run: string | undefined;
  respondVia: ('control' | 'oob')[];
  createdAt: number;
  timer: NodeJS.Timeout | undefined;
  settle: (o: AttentionOutcome) => void;
  onRejected: AttentionRequestInput['onRejected'];
  validate: AttentionRequestInput['validate'];
  detachSignal: (() => void) | undefined;
}

type Evaluation = { ok: true; applied: Answer } | { ok: false; issues: Issue[] };

/** Stable rule ids of the engine's own refusals (documented in docs/decisions.md). */
const RULE = {
  unknown: 'control.respond.unknown-request',
  session: 'control.respond.wrong-session',
  shape: 'control.respond.answer-shape',
  option: 'control.respond.unknown-option',
  text: 'control.respond.unmatched-text',
  values: 'control.respond.values-not-form',
  hook: 'control.respond.validate-failed',
} as const;

function engineIssue(rule: string, path: string, message: string, section: string): Issue {
  return { rule, path, message, section };
}

/**
 * Raises attention requests on an emitter (an {@link EmitterConnection} or any
 * {@link AttentionPort}) and settles them: validates `control.attention.respond` answers (nack
 * `invalid` keeps the request pending), records `attention.answered` (values gated to the event's
 * capture) and `attention.resolved`, emits `attention.timeout` on expiry and
 * `attention.resolved{dismissed}` on dismissal/shutdown. The one implementation of this lifecycle:
 * the demo agent, the Claude Code adapter and the MCP bridge all use it.
 *
 * The connection must declare `control.attention.respond` in `control.accepts` for answers to
 * reach the engine (AEP-0004 §4.2); requests are still raised (and can be answered out of band)
 * without it.
 */
export class AttentionEngine {
  private readonly pendingById = new Map<string, PendingRequest>();
  private readonly resolved: BoundedMap<string, string>;
  private readonly unregister: () => void;
  private readonly capture: CaptureLevel;
  private readonly now: () => number;

  constructor(readonly connection: AttentionPort, readonly options: AttentionEngineOptions = {}) {
    this.capture = clampCapture(options.capture ?? connection.ceiling, connection.ceiling);
    this.resolved = new BoundedMap(options.resolvedMemory ?? 10_000);
    this.now = options.now ?? Date.now;
    this.unregister = connection.onCommand('control.attention.respond', (cmd) => this.onRespond(cmd));
  }

  /**
   * Emit `attention.requested`; the promise settles with the validated answer, a timeout or a
   * dismissal. Throws what the emitter throws for the request itself (nothing is then pending).
   */
  requestAttention(input: AttentionRequestInput): AttentionPromise {
    const capture = clampCapture(input.capture ?? this.capture, this.connection.ceiling);
    const expiresAt = input.expiresInMs !== undefined ? new Date(Date.now() + input.expiresInMs).toISOString() : undefined;
    const declared = input.data?.['respond_via'];
    const respondVia = input.respondVia
      ?? (Array.isArray(declared) ? declared.filter((v): v is 'control' | 'oob' => v === 'control' || v === 'oob') : ['control']);
    const data = capture === 'none' ? undefined : input.data ?? buildAttentionRequestData({
      kind: input.kind,
      prompt: input.prompt ?? '',
      ...(input.options ? { options: input.options } : {}),
      ...(input.fields ? { fields: input.fields } : {}),
      ...(expiresAt ? { expires_at: expiresAt } : {}),
      respond_via: respondVia,
      ...(input.context ? { context: input.context } : {}),
    }, capture, {
      agent: this.connection.options.agent,
      ...(input.subject !== undefined ? { subject: input.subject } : {}),
      ...(this.options.redact ? { redaction: this.options.redact } : {}),
    }) as Record<string, unknown> | undefined;
    const event = this.connection.emit(input.session, 'attention.requested', data, {
      capture,
      severity: input.severity ?? 'notice',
      ...(input.subject !== undefined ? { subject: input.subject } : {}),
      ...(input.cause !== undefined ? { cause: input.cause } : {}),
      ...(input.run !== undefined ? { run: input.run } : {}),
    });
    let settle!: (o: AttentionOutcome) => void;
    const promise = new Promise<AttentionOutcome>((resolve) => { settle = resolve; });
    const req: PendingRequest = {
      id: event.id, session: input.session, kind: input.kind, fields: input.fields, options: input.options,
      capture, run: input.run, respondVia, createdAt: this.now(), timer: undefined, settle, onRejected: input.onRejected,
      validate: input.validate, detachSignal: undefined,
    };
    this.pendingById.set(req.id, req);
    if (input.expiresInMs !== undefined) {
      req.timer = setTimeout(() => this.expire(req.id), Math.max(0, input.expiresInMs));
      if (this.options.unrefTimers) req.timer.unref?.();
    }
    if (input.signal) {
      const signal = input.signal;
      const onAbort = () => { this.dismiss(req.id, 'aborted'); };
      if (signal.aborted) queueMicrotask(onAbort);
      else {
        signal.addEventListener('abort', onAbort, { once: true });
        req.detachSignal = () => signal.removeEventListener('abort', onAbort);
      }
    }
    return Object.assign(promise, { id: event.id, event });
  }

  /** Dismiss a pending request (`attention.resolved{dismissed}`); false when not pending. */
  dismiss(requestId: string, reason?: string): boolean {
    const req = this.take(requestId, 'dismissed');
    if (!req) return false;
    this.follow(req, 'attention.resolved', { resolution: 'dismissed', latency_ms: this.elapsed(req) }, req.id);
    req.settle({ status: 'dismissed', requestId: req.id, ...(reason !== undefined ? { reason } : {}) });
    return true;
  }

  /**
   * Record an answer that arrived out of band (`via:"oob"`, AEP-0008 §2), validated like a
   * control answer (a request's `validate` hook must then answer synchronously). Returns the
   * issues; `ok` means it was applied and the request resolved.
   */
  answerOutOfBand(requestId: string, answer: Answer, by?: string): { ok: boolean; issues: Issue[] } {
    const req = this.pendingById.get(requestId);
    if (!req) return { ok: false, issues: [engineIssue(RULE.unknown, '/subject', `no pending attention request ${requestId}`, 'AEP-0004 §5.3')] };
    const checked = this.check(req, answer);
    if (checked instanceof Promise) {
      checked.catch(() => {});
      return { ok: false, issues: [engineIssue(RULE.hook, '/data/answer', 'out-of-band answers need a synchronous validate hook', 'AEP-0008 §2')] };
    }
    if (!checked.ok) return { ok: false, issues: checked.issues };
    this.take(requestId, 'answered');
    this.record(req, checked.applied, { by, via: 'oob', cause: req.id });
    return { ok: true, issues: [] };
  }

  /** Ids of pending requests (optionally of one session), oldest first. */
  pending(session?: string): string[] {
    const out: string[] = [];
    for (const r of this.pendingById.values()) if (session === undefined || r.session === session) out.push(r.id);
    return out;
  }

  /** Dismiss every pending request of `session`, then emit `session.ended` (AEP-0002 §7.2). */
  endSession(session: string, data?: Record<string, unknown>): WireEvent {
    for (const id of this.pending(session)) this.dismiss(id, 'session ended');
    return this.connection.emit(session, 'session.ended', data ?? { reason: 'normal' });
  }

  /** Dismiss all pending requests (before the caller ends its sessions) and stop handling commands. Idempotent. */
  shutdown(): Promise<void> {
    for (const id of this.pending()) this.dismiss(id, 'shutdown');
    this.unregister();
    return Promise.resolve();
  }

  // ---- internals -------------------------------------------------------------------------

  private take(requestId: string, resolution: string): PendingRequest | undefined {
    const req = this.pendingById.get(requestId);
    if (!req) return undefined;
    this.pendingById.delete(requestId);
    if (req.timer) clearTimeout(req.timer);
    req.detachSignal?.();
    this.resolved.set(requestId, resolution);
    return req;
  }

  private elapsed(req: PendingRequest): number {
    return Math.max(0, this.now() - req.createdAt);
  }

  /**
   * Emit a follow-up event of `req` at its lifecycle capture (no data at `none`), in the request's
   * run. Never throws: the request settles even if recording fails (adapters must not hang).
   */
  private follow(req: PendingRequest, type: AttentionLifecycleType, data: Record<string, unknown>, cause: string): WireEvent | undefined {
    const base: CaptureLevel = type === 'attention.answered' ? req.capture : 'metadata';
    const capture = clampCapture(this.options.lifecycleCapture?.(type, req.capture) ?? base, this.connection.ceiling);
    const attrs: EmitAttributes = { subject: req.id, cause, capture, ...(req.run !== undefined ? { run: req.run } : {}) };
    try {
      return this.connection.emit(req.session, type, capture === 'none' ? undefined : data, attrs);
    } catch (err) {
      this.options.log?.(`could not record ${type} for ${req.id}: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  private expire(requestId: string): void {
    const req = this.take(requestId, 'timed out');
    if (!req) return;
    this.follow(req, 'attention.timeout', { after_ms: this.elapsed(req) }, req.id);
    req.settle({ status: 'timeout', requestId: req.id });
  }

  /** AEP-0004 §5.3 step 3 for `control.attention.respond`; never silent (step 6). */
  private onRespond({ event: cmd }: IncomingCommand): CommandDecision | Promise<CommandDecision> {
    const subject = cmd.subject;
    const req = typeof subject === 'string' ? this.pendingById.get(subject) : undefined;
    if (!req) return this.notPending(subject);
    if (cmd.session !== req.session) {
      return {
        status: 'rejected', reason: 'invalid', capture: req.capture,
        issues: [engineIssue(RULE.session, '/session', 'the command names another session than the request', 'AEP-0004 §2')],
      };
    }
    if (!req.respondVia.includes('control')) {
      // AEP-0008 §2: the request declared its answer arrives out of band.
      return { status: 'rejected', reason: 'refused', detail: 'this request is answered out of band (respond_via)', capture: req.capture };
    }
    const answer = isObject(cmd.data) ? cmd.data['answer'] : undefined;
    const checked = this.check(req, answer);
    return checked instanceof Promise
      ? checked.then((c) => this.decide(req, cmd, c), (err: unknown) => this.decide(req, cmd, hookFailed(err)))
      : this.decide(req, cmd, checked);
  }

  /** Unknown subject: `invalid`; a request already terminal: `refused` (docs/decisions.md). */
  private notPending(subject: unknown): CommandDecision {
    const done = typeof subject === 'string' ? this.resolved.get(subject) : undefined;
    if (done !== undefined) {
      // The request is terminal: the agent declines further answers (brief 06 §5.3 step 3,
      // "run already terminal → refused"); decided in docs/decisions.md.
      return { status: 'rejected', reason: 'refused', detail: `attention request ${String(subject)} is already ${done}`, capture: this.capture };
    }
    return {
      status: 'rejected', reason: 'invalid', capture: this.capture,
      detail: `no pending attention request ${String(subject)}`,
      issues: [engineIssue(RULE.unknown, '/subject', 'subject names no pending attention request of this emitter', 'AEP-0004 §5.3')],
    };
  }

  private decide(req: PendingRequest, cmd: WireEvent, checked: Evaluation): CommandDecision {
    // An asynchronous hook may finish after the request was settled by another path.
    if (this.pendingById.get(req.id) !== req) return this.notPending(req.id);
    if (!checked.ok) {
      try { req.onRejected?.(checked.issues, cmd); } catch { /* a caller callback must not break acking */ }
      return { status: 'rejected', reason: 'invalid', issues: checked.issues, capture: req.capture };
    }
    // Settle now so a concurrent second command is refused; record after the ack (AEP-0004 §1).
    this.take(req.id, 'answered');
    return {
      status: 'accepted',
      after: () => this.record(req, checked.applied, { by: cmd.agent, via: 'control', cause: cmd.id, commandId: cmd.id }),
    };
  }

  /** The engine's checks, then the request's `validate` hook on what would be applied. */
  private check(req: PendingRequest, raw: unknown): Evaluation | Promise<Evaluation> {
    const own = this.evaluate(req, raw);
    if (!own.ok || !req.validate) return own;
    let hooked: ReturnType<NonNullable<PendingRequest['validate']>>;
    try {
      hooked = req.validate(own.applied, { id: req.id, session: req.session, kind: req.kind, ...(req.fields ? { fields: req.fields } : {}), ...(req.options ? { options: req.options } : {}) });
    } catch (err) {
      return hookFailed(err);
    }
    const merge = (h: Awaited<typeof hooked>): Evaluation => (Array.isArray(h)
      ? (h.length > 0 ? { ok: false, issues: h } : own)
      : { ok: true, applied: h.answer });
    return hooked instanceof Promise ? hooked.then(merge) : merge(hooked);
  }

  /** Validates an answer against its request (AEP-0006 §4, AEP-0008 §1); returns what would be applied. */
  private evaluate(req: PendingRequest, raw: unknown): Evaluation {
    const shape = (msg: string, path = '/data/answer') => ({ ok: false as const, issues: [engineIssue(RULE.shape, path, msg, 'AEP-0002 §5.3')] });
    if (!isObject(raw)) return shape('answer must be an object');
    const option = raw['option'];
    const text = raw['text'];
    const values = raw['values'];
    if (option !== undefined && typeof option !== 'string') return shape('answer.option must be a string');
    if (text !== undefined && typeof text !== 'string') return shape('answer.text must be a string');
    const hasOptions = req.options !== undefined && req.options.length > 0;
    if (req.fields) {
      if (values !== undefined) {
        const issues = validateFormAnswer(req.fields, values, { basePath: '/data/answer/values' });
        if (issues.length > 0) return { ok: false, issues };
        return { ok: true, applied: { values: values as Record<string, unknown> } };
      }
      // A form's declared options (decline, cancel, skip...) are its alternatives to values.
      if (!hasOptions) return shape('a form is answered with answer.values', '/data/answer/values');
      if (option === undefined && text === undefined) return shape('a form is answered with answer.values or one of its options', '/data/answer/values');
    }
    if (values !== undefined) return { ok: false, issues: [engineIssue(RULE.values, '/data/answer/values', 'answer.values only answers a form', 'AEP-0006 §3')] };
    if (req.options && hasOptions) {
      if (typeof option === 'string') {
        if (!req.options.some((o) => o.id === option)) {
          return { ok: false, issues: [engineIssue(RULE.option, '/data/answer/option', 'answer.option is not one of the request options', 'AEP-0002 §5.3')] };
        }
        return { ok: true, applied: typeof text === 'string' ? { option, text } : { option } };
      }
      if (typeof text !== 'string') return shape('answer needs option or text');
      // On a form, text can only name an option (the values are the free part).
      const mapped = mapTextAnswer({ kind: req.kind, options: req.options }, text, req.fields ? { otherUnmatched: 'invalid' } : {});
      if (mapped.invalid || (mapped.option === undefined && req.kind === 'permission')) {
        // AEP-0008 §1 step 4: unmatched text never grants; we nack it (documented choice).
        return { ok: false, issues: [engineIssue(RULE.text, '/data/answer/text', 'the text matches no option id or label', 'AEP-0008 §1')] };
      }
      const applied: Answer = {};
      if (mapped.option !== undefined) applied.option = mapped.option;
      if (mapped.text !== undefined) applied.text = mapped.text;
      return { ok: true, applied };
    }
    if (typeof option === 'string') return { ok: false, issues: [engineIssue(RULE.option, '/data/answer/option', 'the request offers no options', 'AEP-0002 §5.3')] };
    if (typeof text !== 'string') return shape('answer needs text');
    return { ok: true, applied: { text } };
  }

  /** `attention.answered` then `attention.resolved{answered}` (AEP-0002 §7), then settle. */
  private record(req: PendingRequest, applied: Answer, how: { by?: string | undefined; via: 'control' | 'oob'; cause: string; commandId?: string }): void {
    const answeredCapture = clampCapture(this.options.lifecycleCapture?.('attention.answered', req.capture) ?? req.capture, this.connection.ceiling);
    const answered = this.follow(req, 'attention.answered', {
      answer: this.gateAnswer(req, applied, answeredCapture),
      ...(how.by !== undefined ? { by: how.by } : {}),
      via: how.via,
    }, how.cause);
    this.follow(req, 'attention.resolved', { resolution: 'answered', latency_ms: this.elapsed(req) }, answered?.id ?? how.cause);
    req.settle({
      status: 'answered', requestId: req.id, answer: applied, via: how.via,
      ...(how.by !== undefined ? { by: how.by } : {}),
      ...(how.commandId !== undefined ? { commandId: how.commandId } : {}),
    });
  }

  /** The recorded answer at the event's capture (AEP-0006 §5.2; `answer.text` is `[redacted]`). */
  private gateAnswer(req: PendingRequest, applied: Answer, capture: CaptureLevel): Record<string, unknown> {
    return gateAnswer(applied, capture, {
      ...(req.fields ? { fields: req.fields } : {}),
      ...(this.options.redact ? { redaction: this.options.redact } : {}),
    }) as Record<string, unknown>;
  }
}

/** A throwing/rejecting `validate` hook nacks `invalid` (never an unacked command, AEP-0004 §5.3 step 6). */
function hookFailed(err: unknown): Evaluation {
  return { ok: false, issues: [engineIssue(RULE.hook, '/data/answer', `the answer could not be validated: ${err instanceof Error ? err.message : String(err)}`, 'AEP-0004 §5.3')] };
}
