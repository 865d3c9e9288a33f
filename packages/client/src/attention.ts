// The emitter-side attention engine (AEP-0002 §7, AEP-0004 §5.3, AEP-0006, AEP-0008; contracts
// C1 approvals and C2 declining a form). The one place in this project that decides whether an
// answer is valid (docs/decisions.md "One answer path (issue 13)"): emitters pass what they know
// as data (fields, options, constraints, the approval text) and translate in their hook.
import {
  APPROVAL_DIGEST_ATTR,
  APPROVAL_PROOF_ATTR,
  FORM_CANCEL_OPTION,
  FORM_DECLINE_OPTION,
  RULES,
  approvalDigest,
  checkApprovalProof,
  optionEffect,
  redactAttentionRequestData,
  synthesizePrompt,
} from '@aep/protocol';
import type { CaptureLevel, FormConstraints, Issue } from '@aep/protocol';
import { clampCapture } from './build.js';
import { buildAttentionRequestData, gateAnswer, mapTextAnswer, redact, validateFormAnswer } from './proto.js';
import type {
  Answer,
  AnswerCheck,
  AttentionEngineOptions,
  AttentionLifecycleType,
  AttentionOutcome,
  AttentionPort,
  AttentionPromise,
  AttentionRequestInput,
  CommandDecision,
  EmitAttributes,
  FieldSpec,
  IncomingCommand,
  WireEvent,
} from './types.js';
import { BoundedMap, isObject } from './util.js';

interface PendingRequest {
  id: string;
  session: string;
  kind: AttentionRequestInput['kind'];
  /** A `kind:"form"` request (or one given `fields`): answered with values, or decline/cancel. */
  form: boolean;
  fields: FieldSpec[] | undefined;
  options: { id: string; label: string }[] | undefined;
  constraints: FormConstraints | undefined;
  approvalText: string | undefined;
  capture: CaptureLevel;
  run: string | undefined;
  respondVia: ('control' | 'oob')[];
  createdAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  settle: (o: AttentionOutcome) => void;
  onRejected: AttentionRequestInput['onRejected'];
  validate: AttentionRequestInput['validate'];
  detachSignal: (() => void) | undefined;
}

/** How an applied answer arrived: who sent it, on which channel, and (issue 18) the policy rule it names. */
interface AnswerHow {
  by?: string | undefined;
  via: 'control' | 'oob';
  cause: string;
  commandId?: string;
  rule?: string | undefined;
}

/** What the engine decided about one answer. */
type Evaluation =
  { ok: true; applied: Answer; refusal?: 'decline' | 'cancel'; result?: unknown; hasResult?: boolean } | { ok: false; issues: Issue[]; detail?: string };

/** Stable rule ids of the engine's own refusals (rows of `RULES`, docs/rules.md "Answers"). */
const RULE = {
  unknown: 'control.respond.unknown-request',
  session: 'control.respond.wrong-session',
  shape: 'control.respond.answer-shape',
  option: 'control.respond.unknown-option',
  text: 'control.respond.unmatched-text',
  values: 'control.respond.values-not-form',
  hook: 'control.respond.validate-failed',
  proof: 'control.respond.approval-proof',
} as const satisfies Record<string, keyof typeof RULES>;

type EngineRule = (typeof RULE)[keyof typeof RULE];

function engineIssue(rule: EngineRule, path: string, message: string): Issue {
  return { rule, path, message: `${rule}: ${message}`, section: RULES[rule].section };
}

/** The refusal options of a form, with labels a text answer may name (AEP-0008 §1). */
const REFUSALS = [
  { id: FORM_DECLINE_OPTION, label: 'Decline' },
  { id: FORM_CANCEL_OPTION, label: 'Cancel' },
] as const;

/**
 * Extension attribute on `control.attention.respond`: the id of the policy rule a delegate
 * answered by (issue 18, docs/decisions.md "Policy delegates"). Asserted by the sender: it only
 * changes the audit label (`attention.resolved{resolution:"auto"}`, the attribute copied onto
 * `attention.answered` and `attention.resolved`), never what is accepted: the answer is checked
 * exactly like any other (approval proof included).
 */
export const POLICY_RULE_ATTR = 'policyrule';
/** Rule ids are structural tokens; an attribute of another shape is ignored. */
export const POLICY_RULE_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The policy rule a command names, when well formed. */
function policyRuleOf(cmd: WireEvent): string | undefined {
  const v = (cmd as unknown as Record<string, unknown>)[POLICY_RULE_ATTR];
  return typeof v === 'string' && POLICY_RULE_PATTERN.test(v) ? v : undefined;
}

/** Said when an allowing answer lacks the proof (contract C1). */
const PROOF_DETAIL =
  'an allowing answer needs the approvalproof of the complete input: show the complete input to the person first (docs/decisions.md "Approvals")';

/**
 * Raises attention requests on an emitter (an {@link EmitterConnection} or any
 * {@link AttentionPort}) and settles them: validates `control.attention.respond` answers (nack
 * `invalid` keeps the request pending), records `attention.answered` (values gated to the event's
 * capture) and `attention.resolved`, emits `attention.timeout` on expiry and
 * `attention.resolved{dismissed}` on dismissal/shutdown. The one implementation of this lifecycle
 * and of answer validation: the demo agent, the Claude Code adapter and the MCP bridge all use it.
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

  constructor(
    readonly connection: AttentionPort,
    readonly options: AttentionEngineOptions = {},
  ) {
    this.capture = clampCapture(options.capture ?? connection.ceiling, connection.ceiling);
    this.resolved = new BoundedMap(options.resolvedMemory ?? 10_000);
    this.now = options.now ?? Date.now;
    this.unregister = connection.onCommand('control.attention.respond', (cmd) => this.onRespond(cmd));
  }

  /**
   * Emit `attention.requested`; the promise settles with the validated answer, a timeout or a
   * dismissal. Throws what the emitter throws for the request itself (nothing is then pending).
   * Every text put into the event at `redacted` has passed the §9.4 pipeline, prebuilt `data`
   * included (docs/decisions.md "One answer path").
   */
  requestAttention(input: AttentionRequestInput): AttentionPromise {
    const capture = clampCapture(input.capture ?? this.capture, this.connection.ceiling);
    const expiresAt = input.expiresInMs !== undefined ? new Date(Date.now() + input.expiresInMs).toISOString() : undefined;
    const declared = input.data?.['respond_via'];
    const respondVia =
      input.respondVia ?? (Array.isArray(declared) ? declared.filter((v): v is 'control' | 'oob' => v === 'control' || v === 'oob') : ['control']);
    const approvalText = typeof input.approvalText === 'string' ? input.approvalText : undefined;
    const data = capture === 'none' ? undefined : this.requestData(input, capture, approvalText, expiresAt, respondVia);
    const extensions = approvalText !== undefined ? { [APPROVAL_DIGEST_ATTR]: approvalDigest(approvalText) } : undefined;
    const event = this.connection.emit(input.session, 'attention.requested', data, {
      capture,
      severity: input.severity ?? 'notice',
      ...(input.subject !== undefined ? { subject: input.subject } : {}),
      ...(input.cause !== undefined ? { cause: input.cause } : {}),
      ...(input.run !== undefined ? { run: input.run } : {}),
      ...(extensions ? { extensions } : {}),
    });
    let settle!: (o: AttentionOutcome) => void;
    const promise = new Promise<AttentionOutcome>((resolve) => {
      settle = resolve;
    });
    const req: PendingRequest = {
      id: event.id,
      session: input.session,
      kind: input.kind,
      form: input.kind === 'form' || input.fields !== undefined,
      fields: input.fields,
      options: input.options,
      constraints: input.constraints,
      approvalText,
      capture,
      run: input.run,
      respondVia,
      createdAt: this.now(),
      timer: undefined,
      settle,
      onRejected: input.onRejected,
      validate: input.validate,
      detachSignal: undefined,
    };
    this.pendingById.set(req.id, req);
    if (input.expiresInMs !== undefined) {
      req.timer = setTimeout(() => this.expire(req.id), Math.max(0, input.expiresInMs));
      if (this.options.unrefTimers) (req.timer as { unref?: () => void }).unref?.();
    }
    if (input.signal) {
      const signal = input.signal;
      const onAbort = () => {
        this.dismiss(req.id, 'aborted');
      };
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
   * control answer (a request's `validate` hook must then answer synchronously; no approval
   * proof is needed: the person answered on the agent's own machine). Returns the issues; `ok`
   * means it was applied and the request settled.
   */
  answerOutOfBand(requestId: string, answer: Answer, by?: string): { ok: boolean; issues: Issue[] } {
    const req = this.pendingById.get(requestId);
    if (!req) return { ok: false, issues: [engineIssue(RULE.unknown, '/subject', 'no pending attention request of this emitter has that id')] };
    const checked = this.check(req, answer, undefined, 'oob');
    if (checked instanceof Promise) {
      checked.catch(() => {});
      return { ok: false, issues: [engineIssue(RULE.hook, '/data/answer', 'out-of-band answers need a synchronous validate hook')] };
    }
    if (!checked.ok) return { ok: false, issues: checked.issues };
    this.take(requestId, checked.refusal === 'cancel' ? 'dismissed' : 'answered');
    this.apply(req, checked, { by, via: 'oob', cause: req.id });
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

  /**
   * The request's `data` at `capture` (not `none`). Built from the input, or the caller's
   * prebuilt data made honest at `redacted` (pipeline on prompt and labels, no `context`). With
   * an approval text the prompt is that text at the capture (contract C1).
   */
  private requestData(
    input: AttentionRequestInput,
    capture: CaptureLevel,
    approvalText: string | undefined,
    expiresAt: string | undefined,
    respondVia: ('control' | 'oob')[],
  ): Record<string, unknown> {
    const agent = this.connection.options.agent;
    if (input.data) {
      const data = capture === 'redacted' ? redactAttentionRequestData(input.data, this.options.redact) : { ...input.data };
      if (approvalText !== undefined) {
        data['prompt'] =
          capture === 'full'
            ? approvalText
            : capture === 'redacted'
              ? redact(approvalText, this.options.redact)
              : synthesizePrompt(agent, input.kind, input.subject);
      }
      return data;
    }
    return buildAttentionRequestData(
      {
        kind: input.kind,
        prompt: approvalText ?? input.prompt ?? '',
        ...(input.options ? { options: input.options } : {}),
        ...(input.fields ? { fields: input.fields } : {}),
        ...(expiresAt ? { expires_at: expiresAt } : {}),
        respond_via: respondVia,
        ...(input.context ? { context: input.context } : {}),
      },
      capture,
      {
        agent,
        ...(input.subject !== undefined ? { subject: input.subject } : {}),
        ...(this.options.redact ? { redaction: this.options.redact } : {}),
      },
    ) as unknown as Record<string, unknown>;
  }

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
  private follow(
    req: PendingRequest,
    type: AttentionLifecycleType,
    data: Record<string, unknown>,
    cause: string,
    extensions?: Record<string, string>,
  ): WireEvent | undefined {
    const base: CaptureLevel = type === 'attention.answered' ? req.capture : 'metadata';
    const capture = clampCapture(this.options.lifecycleCapture?.(type, req.capture) ?? base, this.connection.ceiling);
    const attrs: EmitAttributes = {
      subject: req.id,
      cause,
      capture,
      ...(req.run !== undefined ? { run: req.run } : {}),
      ...(extensions ? { extensions } : {}),
    };
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
      return this.reject(
        req,
        { ok: false, issues: [engineIssue(RULE.session, '/session', 'the command names another session than the request it answers')] },
        undefined,
      );
    }
    if (!req.respondVia.includes('control')) {
      // AEP-0008 §2: the request declared its answer arrives out of band.
      return { status: 'rejected', reason: 'refused', detail: 'this request is answered out of band (respond_via)', capture: req.capture };
    }
    const answer = isObject(cmd.data) ? cmd.data['answer'] : undefined;
    const proof = (cmd as unknown as Record<string, unknown>)[APPROVAL_PROOF_ATTR];
    const checked = this.check(req, answer, proof, 'control');
    return checked instanceof Promise
      ? checked.then(
          (c) => this.decide(req, cmd, c),
          (err: unknown) => this.decide(req, cmd, this.hookFailed(req, err)),
        )
      : this.decide(req, cmd, checked);
  }

  /** Unknown subject: `invalid`; a request already terminal: `refused` (docs/decisions.md). */
  private notPending(subject: unknown): CommandDecision {
    const done = typeof subject === 'string' ? this.resolved.get(subject) : undefined;
    if (done !== undefined) {
      // The request is terminal: the agent declines further answers (AEP-0004 §4 step 3,
      // "run already terminal → refused"); decided in docs/decisions.md. The id is our own.
      return { status: 'rejected', reason: 'refused', detail: `attention request ${String(subject)} is already ${done}`, capture: this.capture };
    }
    // The subject is the sender's text: never repeated (issue 12).
    return {
      status: 'rejected',
      reason: 'invalid',
      capture: this.capture,
      detail: 'the subject names no pending attention request of this emitter',
      issues: [engineIssue(RULE.unknown, '/subject', 'the subject names no pending attention request of this emitter')],
    };
  }

  private decide(req: PendingRequest, cmd: WireEvent, checked: Evaluation): CommandDecision {
    // An asynchronous hook may finish after the request was settled by another path.
    if (this.pendingById.get(req.id) !== req) return this.notPending(req.id);
    if (!checked.ok) return this.reject(req, checked, cmd);
    // Settle now so a concurrent second command is refused; record after the ack (AEP-0004 §1).
    this.take(req.id, checked.refusal === 'cancel' ? 'dismissed' : 'answered');
    return {
      status: 'accepted',
      after: () => this.apply(req, checked, { by: cmd.agent, via: 'control', cause: cmd.id, commandId: cmd.id, rule: policyRuleOf(cmd) }),
    };
  }

  /**
   * The `invalid` nack: issues scrubbed of anything submitted, messages and detail through the
   * §9.4 pipeline at `redacted` (the connection drops them below `redacted`).
   */
  private reject(req: PendingRequest, checked: Extract<Evaluation, { ok: false }>, cmd: WireEvent | undefined): CommandDecision {
    const answer = cmd && isObject(cmd.data) ? cmd.data['answer'] : undefined;
    const issues = scrubIssues(checked.issues, answer, req.fields);
    if (cmd) {
      try {
        req.onRejected?.(issues, cmd);
      } catch {
        /* a caller callback must not break acking */
      }
    }
    const text = (s: string) => (req.capture === 'redacted' ? redact(s, this.options.redact) : s);
    return {
      status: 'rejected',
      reason: 'invalid',
      capture: req.capture,
      issues: issues.map((i) => ({ ...i, message: text(i.message) })),
      ...(checked.detail !== undefined ? { detail: text(checked.detail) } : {}),
    };
  }

  /** The engine's checks, then (for a valid answer that is not a refusal) the request's translation hook. */
  private check(req: PendingRequest, raw: unknown, proof: unknown, via: 'control' | 'oob'): Evaluation | Promise<Evaluation> {
    const own = this.evaluate(req, raw, proof, via);
    if (!own.ok || own.refusal !== undefined || !req.validate) return own;
    let hooked: AnswerCheck | Promise<AnswerCheck>;
    try {
      hooked = req.validate(own.applied, {
        id: req.id,
        session: req.session,
        kind: req.kind,
        ...(req.fields ? { fields: req.fields } : {}),
        ...(req.options ? { options: req.options } : {}),
      });
    } catch (err) {
      return this.hookFailed(req, err);
    }
    return hooked instanceof Promise ? hooked.then((h) => mergeHook(own, h)) : mergeHook(own, hooked);
  }

  /** Validates an answer against its request (AEP-0006 §4, AEP-0008 §1, C1, C2); returns what would be applied. */
  private evaluate(req: PendingRequest, raw: unknown, proof: unknown, via: 'control' | 'oob'): Evaluation {
    const fail = (rule: EngineRule, path: string, msg: string): Evaluation => ({ ok: false, issues: [engineIssue(rule, path, msg)] });
    if (!isObject(raw)) return fail(RULE.shape, '/data/answer', 'the answer must be a JSON object');
    const option = raw['option'];
    const text = raw['text'];
    const values = raw['values'];
    if (option !== undefined && typeof option !== 'string') return fail(RULE.shape, '/data/answer/option', 'answer.option must be a string');
    if (text !== undefined && typeof text !== 'string') return fail(RULE.shape, '/data/answer/text', 'answer.text must be a string');
    const declared = req.options ?? [];
    const withText = (o: string): Answer => (typeof text === 'string' ? { option: o, text } : { option: o });

    if (req.form) {
      if (values !== undefined) {
        // Values win over an option sent beside them (a form submission).
        const issues = validateFormAnswer(req.fields ?? [], values, { ...(req.constraints ? { constraints: req.constraints } : {}) });
        if (issues.length > 0) return { ok: false, issues };
        return { ok: true, applied: { values: values as Record<string, unknown> } };
      }
      // The alternatives to values: a declared option (deprecated on forms), else decline/cancel (C2).
      let chosen = typeof option === 'string' ? option : undefined;
      if (chosen === undefined && typeof text === 'string') {
        // On a form, text can only name an option (AEP-0008 §1; the values are the free part).
        const menu = [...declared, ...REFUSALS.filter((r) => !declared.some((o) => o.id === r.id))];
        const mapped = mapTextAnswer({ kind: req.kind, options: menu }, text, { otherUnmatched: 'invalid' });
        if (mapped.option === undefined)
          return fail(
            RULE.text,
            '/data/answer/text',
            'on a form, a text-only answer must name decline, cancel or one of its options; the form itself is answered with answer.values',
          );
        chosen = mapped.option;
        if (declared.some((o) => o.id === chosen)) return { ok: true, applied: { option: chosen } };
        return { ok: true, applied: { option: chosen }, refusal: chosen === FORM_CANCEL_OPTION ? 'cancel' : 'decline' };
      }
      if (chosen === undefined)
        return fail(RULE.shape, '/data/answer/values', 'a form is answered with answer.values, or refused with option decline or cancel');
      if (declared.some((o) => o.id === chosen)) return this.permitted(req, withText(chosen), proof, via);
      if (chosen === FORM_DECLINE_OPTION) return { ok: true, applied: withText(chosen), refusal: 'decline' };
      if (chosen === FORM_CANCEL_OPTION) return { ok: true, applied: { option: chosen }, refusal: 'cancel' };
      return fail(RULE.option, '/data/answer/option', 'the option is not one this form accepts (values, decline, cancel or a declared option)');
    }
    if (values !== undefined) return fail(RULE.values, '/data/answer/values', 'answer.values answers only a form');
    if (declared.length > 0) {
      if (typeof option === 'string') {
        if (!declared.some((o) => o.id === option)) return fail(RULE.option, '/data/answer/option', 'the option is not one of the request options');
        return this.permitted(req, withText(option), proof, via);
      }
      if (typeof text !== 'string') return fail(RULE.shape, '/data/answer', 'the answer needs an option or a text naming one');
      const mapped = mapTextAnswer({ kind: req.kind, options: declared }, text);
      if (mapped.invalid || (mapped.option === undefined && req.kind === 'permission')) {
        // AEP-0008 §1 step 4: unmatched text never grants; without a refusing option we nack it.
        return fail(RULE.text, '/data/answer/text', 'the text names no option by id or label');
      }
      const applied: Answer = {};
      if (mapped.option !== undefined) applied.option = mapped.option;
      if (mapped.text !== undefined) applied.text = mapped.text;
      return this.permitted(req, applied, proof, via);
    }
    if (typeof option === 'string') return fail(RULE.option, '/data/answer/option', 'the request offers no options');
    if (typeof text !== 'string') return fail(RULE.shape, '/data/answer', 'the answer needs text');
    return { ok: true, applied: { text } };
  }

  /**
   * Contract C1: an allowing answer to a request with an approval text needs the proof that the
   * answerer held the complete text. Deny and out-of-band answers need none.
   */
  private permitted(req: PendingRequest, applied: Answer, proof: unknown, via: 'control' | 'oob'): Evaluation {
    if (req.approvalText === undefined || via === 'oob' || applied.option === undefined) return { ok: true, applied };
    if (optionEffect(applied.option) !== 'allow') return { ok: true, applied };
    if (checkApprovalProof(req.id, req.approvalText, proof)) return { ok: true, applied };
    const why = proof === undefined ? 'the answer carries no approvalproof' : 'the approvalproof does not match the complete input of this request';
    return {
      ok: false,
      detail: PROOF_DETAIL,
      issues: [engineIssue(RULE.proof, `/${APPROVAL_PROOF_ATTR}`, `${why}; show the complete input to the person first`)],
    };
  }

  /** A valid answer takes effect: decline and answers are recorded as answered, cancel as dismissed (C2). */
  private apply(req: PendingRequest, checked: Extract<Evaluation, { ok: true }>, how: AnswerHow): void {
    if (checked.refusal === 'cancel') {
      this.follow(req, 'attention.resolved', { resolution: 'dismissed', latency_ms: this.elapsed(req) }, how.cause);
      req.settle({
        status: 'dismissed',
        requestId: req.id,
        reason: 'cancelled',
        refusal: 'cancel',
        via: how.via,
        ...(how.by !== undefined ? { by: how.by } : {}),
        ...(how.commandId !== undefined ? { commandId: how.commandId } : {}),
      });
      return;
    }
    this.record(req, checked, how);
  }

  /**
   * `attention.answered` then `attention.resolved` (AEP-0002 §7), then settle. An answer that
   * names a policy rule closes with `resolution:"auto"` (AEP-0002 §5.3: no human answer) and
   * both events carry the rule in the `policyrule` attribute (issue 18).
   */
  private record(req: PendingRequest, checked: Extract<Evaluation, { ok: true }>, how: AnswerHow): void {
    const applied = checked.applied;
    const answeredCapture = clampCapture(this.options.lifecycleCapture?.('attention.answered', req.capture) ?? req.capture, this.connection.ceiling);
    const extensions = how.rule !== undefined ? { [POLICY_RULE_ATTR]: how.rule } : undefined;
    const answered = this.follow(
      req,
      'attention.answered',
      {
        answer: this.gateAnswer(req, applied, answeredCapture),
        ...(how.by !== undefined ? { by: how.by } : {}),
        via: how.via,
      },
      how.cause,
      extensions,
    );
    this.follow(
      req,
      'attention.resolved',
      { resolution: how.rule !== undefined ? 'auto' : 'answered', latency_ms: this.elapsed(req) },
      answered?.id ?? how.cause,
      extensions,
    );
    req.settle({
      status: 'answered',
      requestId: req.id,
      answer: applied,
      via: how.via,
      ...(how.by !== undefined ? { by: how.by } : {}),
      ...(how.commandId !== undefined ? { commandId: how.commandId } : {}),
      ...(how.rule !== undefined ? { rule: how.rule } : {}),
      ...(checked.refusal === 'decline' ? { refusal: 'decline' as const } : {}),
      ...(checked.hasResult ? { result: checked.result } : {}),
    });
  }

  /** The recorded answer at the event's capture (AEP-0006 §5.2; `answer.text` is `[redacted]`). */
  private gateAnswer(req: PendingRequest, applied: Answer, capture: CaptureLevel): Record<string, unknown> {
    return gateAnswer(applied, capture, {
      ...(req.fields ? { fields: req.fields } : {}),
      ...(this.options.redact ? { redaction: this.options.redact } : {}),
    }) as Record<string, unknown>;
  }

  /**
   * A throwing/rejecting `validate` hook nacks `invalid` (never an unacked command, AEP-0004 §5.3
   * step 6). Its error text stays local (it may hold the answer); the log line is redacted.
   */
  private hookFailed(req: PendingRequest, err: unknown): Evaluation {
    this.options.log?.(`the validate hook of ${req.id} failed: ${redact(err instanceof Error ? err.message : String(err), this.options.redact)}`);
    return { ok: false, issues: [engineIssue(RULE.hook, '/data/answer', 'the emitter could not translate the answer for its agent')] };
  }
}

/** Folds a `validate` hook's result into the engine's verdict (typed results, and the deprecated shapes). */
function mergeHook(own: Extract<Evaluation, { ok: true }>, h: AnswerCheck): Evaluation {
  const failed = (): Evaluation => ({
    ok: false,
    issues: [engineIssue(RULE.hook, '/data/answer', 'the emitter could not translate the answer for its agent')],
  });
  if (Array.isArray(h)) return h.length > 0 ? { ok: false, issues: h.map(tableRule) } : own; // deprecated: Issue[]
  const r: unknown = h;
  if (!isObject(r)) return failed();
  if (r['ok'] === true) {
    const v = r as { ok: true; answer?: Answer; result?: unknown };
    return { ok: true, applied: isObject(v.answer) ? v.answer : own.applied, ...('result' in v ? { result: v.result, hasResult: true } : {}) };
  }
  if (r['ok'] === false) {
    const issues = r['issues'];
    return Array.isArray(issues) && issues.length > 0 ? { ok: false, issues: (issues as Issue[]).map(tableRule) } : failed();
  }
  if (isObject(r['answer'])) return { ok: true, applied: r['answer'] as Answer }; // deprecated: { answer }
  return failed();
}

/** One rule vocabulary on the wire: a hook issue whose rule is not a row of `RULES` is reported as `validate-failed`. */
function tableRule(i: Issue): Issue {
  const ok = i !== null && typeof i === 'object' && typeof i.rule === 'string' && Object.prototype.hasOwnProperty.call(RULES, i.rule);
  if (ok)
    return {
      rule: i.rule,
      path: typeof i.path === 'string' ? i.path : '/data/answer',
      message: typeof i.message === 'string' ? i.message : i.rule,
      section: typeof i.section === 'string' ? i.section : RULES[i.rule as keyof typeof RULES].section,
    };
  const path = i !== null && typeof i === 'object' && typeof i.path === 'string' ? i.path : '/data/answer';
  return { rule: RULE.hook, path, message: `${RULE.hook}: the emitter could not translate the answer for its agent`, section: RULES[RULE.hook].section };
}

/**
 * Every string the answerer submitted (option, text, values keys, string values and elements) of
 * at least 2 characters, and every number of at least 2 digits, except what the request itself
 * names (field ids and their choice ids are structural).
 */
function submittedStrings(answer: unknown, fields: FieldSpec[] | undefined): string[] {
  const out: string[] = [];
  const byId = new Map((fields ?? []).map((f) => [f.id, f] as const));
  const take = (v: unknown, structural?: (s: string) => boolean) => {
    if (typeof v === 'string' && v.trim().length >= 2 && !structural?.(v)) out.push(v.trim());
    else if (typeof v === 'number' && Number.isFinite(v) && String(v).length >= 2) out.push(String(v));
  };
  if (!isObject(answer)) return out;
  take(answer['option']);
  take(answer['text']);
  const values = answer['values'];
  if (isObject(values)) {
    for (const k of Object.keys(values)) {
      const f = byId.get(k);
      if (!f) take(k);
      const isChoice = (s: string) => f?.type === 'select' && Array.isArray(f.choices) && f.choices.some((c) => c.id === s);
      const v = values[k];
      if (Array.isArray(v)) v.forEach((x) => take(x, isChoice));
      else take(v, isChoice);
    }
  }
  return out;
}

/**
 * The safety net of "never repeat submitted values" (issue 12): an issue whose message repeats
 * something the answerer submitted gets the rule's table meaning instead, and a path naming a
 * submitted key (other than a field id) is cut back to the answer member. The engine's and the
 * protocol's own messages never do; a hook's might.
 */
function scrubIssues(issues: Issue[], answer: unknown, fields: FieldSpec[] | undefined): Issue[] {
  const submitted = submittedStrings(answer, fields);
  if (submitted.length === 0) return issues;
  const ids = new Set((fields ?? []).map((f) => f.id));
  return issues.map((i) => {
    let { message, path } = i;
    if (submitted.some((s) => message.includes(s))) {
      const meaning = Object.prototype.hasOwnProperty.call(RULES, i.rule) ? RULES[i.rule as keyof typeof RULES].meaning : 'the answer was refused';
      message = `${i.rule}: ${meaning}`;
    }
    const segs = path.split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
    if (segs.some((s, n) => n > 0 && !ids.has(s) && submitted.includes(s))) {
      path = path.startsWith('/data/answer/values') ? '/data/answer/values' : '/data/answer';
    }
    return message === i.message && path === i.path ? i : { ...i, message, path };
  });
}
