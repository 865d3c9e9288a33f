// Public types of @aep/client. Wire shapes follow the brief: AEP-0001 (envelope), AEP-0003
// (bindings), AEP-0004 (control), AEP-0006 (forms), AEP-0008 (text answers).
import type {
  AepEvent,
  EventInput,
  CaptureLevel,
  ExtensionValue,
  FieldSpec as ProtocolFieldSpec,
  FormConstraints,
  Issue,
  OfflineRequest,
  RedactOptions,
  RosterEntry,
  Severity,
} from '@aep/protocol';
import type { SocketOptions } from './socket.js';

/**
 * An AEP event as it travels (AEP-0001 §5): the 16 context attributes, optional `data`, and
 * extension attributes: the envelope type generated from `schemas/aep-event.schema.json`.
 */
export type WireEvent = AepEvent;

/**
 * Envelope attributes a caller may set on `emit` (the SDK owns `aep`, `id`, `time`, `seq`,
 * `epoch`): the protocol builder's own per-event input, less what the connection fills in.
 */
export type EmitAttributes = Pick<EventInput, 'subject' | 'run' | 'step' | 'cause' | 'traceparent' | 'severity' | 'capture' | 'extensions'>;

/** A resume position (AEP-0001 §7.6): deliver strictly after `(epoch, seq)` of `session`. */
export interface ResumePosition {
  session: string;
  epoch: number;
  seq: number;
}

/** Reconnect policy: exponential backoff with jitter between `initialMs` and `maxMs`. */
export interface ReconnectOptions {
  /** First delay; default 100 ms. */
  initialMs?: number;
  /** Cap; default 5 000 ms. */
  maxMs?: number;
  /** Give up after this many consecutive failures; default Infinity (keep trying until closed). */
  maxAttempts?: number;
}

/** Declared command surface of a target (AEP-0003 §4 `capabilities.control`, AEP-0004 §3). */
export interface ControlDeclaration {
  /** Command types this emitter accepts (authoritative, AEP-0004 §4.2). */
  accepts: string[];
  /** Ack window advertised in `hello`; default 10 000 ms. */
  ackWindowMs?: number;
}

/** Options of {@link EmitterConnection}. */
export interface EmitterOptions extends SocketOptions {
  /** Relay base URL, `http(s)://host:port` (the socket is `{url}/socket`, AEP-0003 §3.5). */
  url: string;
  /** Bearer token; required for control (AEP-0004 §4.1). Sent as `Authorization`, never logged. */
  token?: string;
  /** Logical agent identity: `hello.identity.agent` and the events' `agent`. */
  agent: string;
  /** `hello.identity.instance`; default `{hostname}/{pid}`. */
  instance?: string;
  /**
   * Base `source` URI; default `aep://{hostname}/agent/{agent}`. Session events use
   * `{source}/session/{session}` (AEP-0001 §5 recommended shape).
   */
  source?: string;
  /** Capture ceiling: no emitted event exceeds it (AEP-0003 §9.1); default `metadata`. */
  capture?: CaptureLevel;
  /** Commands accepted (declared in `hello`); absent = accepts none. */
  control?: ControlDeclaration;
  /** Categories hinted in `hello.capabilities.emits`. */
  emits?: string[];
  /**
   * Directory for durable state (the epoch counter, AEP-0001 §7.2). Absent: the epoch is seeded
   * from the wall clock in milliseconds (monotonic across restarts unless the clock goes back).
   */
  stateDir?: string;
  /** Max events buffered while disconnected; default 10 000. Over it `debug`/`info` go first (counted). */
  bufferLimit?: number;
  /** Reconnect policy. */
  reconnect?: ReconnectOptions;
  /**
   * Options of the §9.4 pipeline run on every event sent at `redacted` (operator secret values
   * and names, PII switch). `home` defaults to the user's home directory.
   */
  redact?: RedactOptions;
  /**
   * Dismiss (`attention.resolved{resolution:"dismissed"}`) the `offline` requests the relay's
   * roster lists for this connection's own `(source, session)`s that this connection did not
   * raise (contract C4: an emitter that comes back does not re-claim them). Default true.
   */
  dismissOffline?: boolean;
  /** Diagnostics sink (never receives tokens or the claim). Default: silent. */
  log?: (line: string) => void;
}

/** A command as delivered to a handler: the parsed event and the exact bytes received. */
export interface IncomingCommand {
  event: WireEvent;
  raw: string;
}

/**
 * A target's decision on one command (AEP-0004 §3). `after` runs once the ack has been emitted
 * (outcome events must follow their ack, AEP-0004 §1).
 */
export type CommandDecision =
  | { status: 'accepted'; after?: () => void }
  | {
      status: 'rejected';
      reason: 'unsupported' | 'unauthorized' | 'busy' | 'refused' | 'invalid';
      /** Free-text detail: emitted only when the ack's capture is `redacted`+ (it is `[redacted]`). */
      detail?: string;
      /** Structured issues (rule + path at any capture; `message` only at `redacted`+). */
      issues?: Issue[];
      /** Capture of the ack; default the connection ceiling. */
      capture?: CaptureLevel;
      after?: () => void;
    };

/** Handles one deduplicated command; must decide within the ack window. */
export type CommandHandler = (command: IncomingCommand) => CommandDecision | Promise<CommandDecision>;

/** Counters an emitter exposes (OTel-style overflow accounting, docs/conventions.md §8). */
export interface EmitterStats {
  connected: boolean;
  /** Events waiting to be written. */
  buffered: number;
  /** Events dropped because the buffer was full (debug/info first). */
  dropped: number;
  /** Successful reconnections after the first connect. */
  reconnects: number;
  /** Commands received (including redeliveries). */
  commands: number;
  /** Offline requests of earlier connections this one dismissed (contract C4). */
  dismissed: number;
}

/** Options of {@link subscribe}. */
export interface SubscribeOptions extends SocketOptions {
  /** Relay base URL. */
  url: string;
  token?: string;
  /** attr-match filter (AEP-0003 §6); default `{}`. */
  filter?: Record<string, unknown>;
  /** Capture ceiling of the subscription (AEP-0003 §6.4); absent = as received. */
  ceiling?: CaptureLevel;
  /** Start: `'all'` (replay everything held), explicit positions, or absent (live only). */
  from?: 'all' | ResumePosition[];
  /** `'sse'` (default) or `'ws'`. */
  transport?: 'sse' | 'ws';
  /** `false`: replay only (SSE `live=0`); the subscription ends after the replay. Default true. */
  live?: boolean;
  /** Reconnect policy for live subscriptions (resumes gaplessly from the last positions). */
  reconnect?: ReconnectOptions;
  /** Aborts the subscription. */
  signal?: AbortSignal;
  /** Called on `replay-exhausted` (the relay no longer holds part of the requested history). */
  onReplayExhausted?: (session: string, earliest: { epoch: number; seq: number }) => void;
  /** Connection state changes. */
  onState?: (state: 'connecting' | 'open' | 'reconnecting' | 'closed') => void;
  /** Non-fatal errors (bad frames, reconnect causes). */
  onError?: (err: Error) => void;
  /** Dedupe memory in `(source, id)` keys; default 100 000. */
  dedupeLimit?: number;
}

/** A running subscription. */
export interface Subscription {
  /** Stops it (idempotent). */
  close(): void;
  /** Settles when the subscription ends (closed, aborted, replay-only finished, or gave up). */
  readonly done: Promise<void>;
  /** Resolves once the first connection is established (subscribed). Rejects if it never is. */
  readonly ready: Promise<void>;
  /** Last delivered position per session (what a later `from` would resume after). */
  positions(): ResumePosition[];
}

/** Options of {@link CommandSender}. */
export interface CommandSenderOptions extends SocketOptions {
  url: string;
  /** Required: commands are refused on unauthenticated bindings (AEP-0004 §4.1). */
  token?: string;
  /** Sender identity (`agent` of commands and `hello.identity.agent`); default `aep-cli`. */
  agent?: string;
  /** `hello.identity.instance`; default none (the Node entry: `{hostname}/{pid}`). */
  instance?: string;
  /** Sender `source`; default `aep://localhost/agent/{agent}` (the Node entry: the host name). */
  source?: string;
  /**
   * What the standing subscription per target session carries: `acks` (default: only
   * `control.accepted`/`control.rejected`) or `session` (every event of the session, e.g. for an
   * inbox that folds outcomes too). Either way every Event frame goes to `onEvent`.
   */
  watch?: 'acks' | 'session';
  /** Every Event frame received on the sender's socket, with its bytes. */
  onEvent?: (event: WireEvent, raw: string) => void;
  /** Window per attempt; default 10 000 ms (AEP-0004 §3). */
  ackWindowMs?: number;
  /** Extra attempts with the identical envelope after a silent window; default 1. */
  retries?: number;
  /** Connect timeout; default 5 000 ms. */
  connectTimeoutMs?: number;
}

/** An answer (AEP-0002 §5.3): option id, free text, and/or form values. */
export interface Answer {
  option?: string;
  text?: string;
  values?: Record<string, unknown>;
}

/** Input of {@link CommandSender.respond}. */
export interface RespondInput {
  /** Target session (the request's `session`). */
  session: string;
  /** The `attention.requested` id (command `subject` and `cause`). */
  requestId: string;
  answer: Answer;
  /** Command capture; default `redacted` when the answer carries text or string values, else `metadata`. */
  capture?: CaptureLevel;
  /** Reuse a command id (a retry of an earlier command, AEP-0004 §2). */
  id?: string;
  /**
   * Extension attributes of the command (AEP-0001 §5.4), e.g. `approvalproof` =
   * `approvalProof(requestId, text)` on a permissive answer (contract C1).
   */
  extensions?: Readonly<Record<string, ExtensionValue>>;
}

/** Input of {@link CommandSender.cancel} (`control.cancel`, AEP-0004 §5). */
export interface CancelInput {
  session: string;
  scope: 'run' | 'session';
  /** Required for `scope:"run"` (the envelope `run`). */
  run?: string;
  /** Free text: the command then rides at `redacted` (through the §9.4 pipeline). */
  reason?: string;
  capture?: CaptureLevel;
  id?: string;
  extensions?: Readonly<Record<string, ExtensionValue>>;
}

/** Input of {@link CommandSender.pause} / {@link CommandSender.resume} (`control.pause` / `control.resume`, AEP-0004 §5). */
export interface SteerInput {
  session: string;
  /** Optional envelope `run` (the commands are session-scoped; a target may use it). */
  run?: string;
  id?: string;
  extensions?: Readonly<Record<string, ExtensionValue>>;
}

/** A roster snapshot (AEP-0003 §4.1): live claims, and (contract C4) pending requests whose asker is gone. */
export interface RosterSnapshot {
  entries: RosterEntry[];
  /** Present only when the relay tracks offline requests (contract C4). */
  offline?: OfflineRequest[];
}

/**
 * Outcome of a command, as seen by the sender (AEP-0004 §5.4): `accepted`/`rejected` are the
 * target's ack; `refused` is a relay `error` frame with `cause` = command id (code in `reason`);
 * `no-ack` is the local timeout (never on the wire).
 */
export interface CommandResult {
  status: 'accepted' | 'rejected' | 'refused' | 'no-ack';
  /** Nack reason (`control.rejected.reason`) or the relay's error `code`. */
  reason?: string;
  detail?: string;
  issues?: Issue[];
  /** The command envelope sent (identical on every attempt). */
  command: WireEvent;
  /** The ack event, when one arrived. */
  ack?: WireEvent;
}

/** Attention kinds (AEP-0002 §5.3). */
export type AttentionKind = 'permission' | 'input' | 'auth' | 'review' | 'form' | 'other';

/** A form field (AEP-0006 `field_spec`), the protocol package's type. */
export type FieldSpec = ProtocolFieldSpec;

/** Input of {@link AttentionEngine.requestAttention}. */
export interface AttentionRequestInput {
  session: string;
  kind: AttentionKind;
  /**
   * What the human reads (synthesized at `metadata`, redacted at `redacted`). Required unless
   * `data` is given.
   */
  prompt?: string;
  /**
   * Prebuilt `attention.requested` data, already at `capture` (e.g. a mapping's pinned structural
   * prompt, AEP-0002 Annex A). Sent as is: the engine synthesizes nothing and adds neither
   * `expires_at` nor `respond_via`. `kind`, `fields` and `options` must still be given (real
   * labels): answers are validated against them (AEP-0006 §4, AEP-0008 §1).
   */
  data?: Record<string, unknown>;
  subject?: string;
  fields?: FieldSpec[];
  /**
   * The request's options. A form needs none: every form accepts `decline` and `cancel`
   * without listing them (contract C2, `FORM_REFUSAL_OPTIONS`). Options declared on a form are
   * extra alternatives to submitting values (deprecated: the Annex A pins fix a form's `data`).
   */
  options?: { id: string; label: string }[];
  /**
   * Per field id, the constraints an upstream schema puts on answers beyond the `field_spec`
   * (integer-ness, string lengths, format, item counts), e.g. `elicitationToForm(...).constraints`.
   * The engine checks them with the form (`validateFormAnswer(fields, values, { constraints })`):
   * an answer breaking one is nacked `invalid` and the request stays pending.
   */
  constraints?: FormConstraints;
  /**
   * The complete input an approval applies to (contract C1, docs/decisions.md "Approvals"), e.g.
   * the whole command. When given, the engine builds `data.prompt` from it at the request's
   * capture (verbatim at `full`, through the §9.4 pipeline at `redacted`, synthesized at
   * `metadata`; it replaces `prompt`, and the prompt of prebuilt `data`), sets the extension
   * attribute `approvaldigest` = `approvalDigest(approvalText)`, and nacks `invalid` (rule
   * `control.respond.approval-proof`) an allowing answer (an option whose `optionEffect` is
   * `allow`, or text that maps to one) whose `approvalproof` attribute fails
   * `checkApprovalProof(requestId, approvalText, proof)`. Deny needs no proof; neither does an
   * out-of-band answer (given on the agent's own machine).
   */
  approvalText?: string;
  /** Capture of the lifecycle events; default the engine's capture. */
  capture?: CaptureLevel;
  /** Expiry; emits `attention.timeout` when it passes. Absent: no deadline. */
  expiresInMs?: number;
  /** Channel declaration (AEP-0008 §2); default `['control']`. */
  respondVia?: ('control' | 'oob')[];
  /** Aborting dismisses the request (`attention.resolved{dismissed}`). */
  signal?: AbortSignal;
  /** Default `notice` (AEP-0001 §7: attention SHOULD be ≥ notice). */
  severity?: Severity;
  cause?: string;
  run?: string;
  /** `context` (full capture only). */
  context?: Record<string, unknown>;
  /** Called for each answer nacked `invalid` (the request stays pending). */
  onRejected?: (issues: Issue[], command: WireEvent) => void;
  /**
   * Translation hook: runs only on an answer the engine has already found valid (shape,
   * options, AEP-0008 text, AEP-0006 values and `constraints`, approval proof), never on a
   * form's `decline`/`cancel`, with the answer the engine would apply. It translates, it does
   * not validate: return `{ ok: true, answer?, result? }` (`answer` replaces the recorded
   * answer, `result` is handed back as the outcome's `result`, e.g. the vendor's hook output),
   * or `{ ok: false, issues }` when the answer cannot be translated (nack `invalid`, the request
   * stays pending). An issue whose rule is not a row of `RULES` is reported as
   * `control.respond.validate-failed`. May be async: an answer whose request was settled
   * meanwhile is refused. The legacy results `Issue[]` and `{ answer }` still work (deprecated).
   */
  validate?: (answer: Answer, request: AttentionRequestView) => AnswerCheck | Promise<AnswerCheck>;
}

/** What a {@link AttentionRequestInput.validate} hook sees of its request. */
export interface AttentionRequestView {
  id: string;
  session: string;
  kind: AttentionKind;
  fields?: FieldSpec[];
  options?: { id: string; label: string }[];
}

/**
 * Typed result of a `validate` (translation) hook: accept (optionally replacing the recorded
 * answer and handing `result` to the caller through the outcome), or refuse with issues.
 */
export type AnswerVerdict = { ok: true; answer?: Answer; result?: unknown } | { ok: false; issues: Issue[] };

/**
 * @deprecated Legacy `validate` results: `Issue[]` (empty = accept as is) or `{ answer }` (the
 * answer to apply instead). Return an {@link AnswerVerdict}.
 */
export type LegacyAnswerCheck = Issue[] | { answer: Answer };

/** What a `validate` hook may return: an {@link AnswerVerdict} (or, deprecated, a {@link LegacyAnswerCheck}). */
export type AnswerCheck = AnswerVerdict | LegacyAnswerCheck;

/** The lifecycle events whose capture {@link AttentionEngineOptions.lifecycleCapture} decides. */
export type AttentionLifecycleType = 'attention.answered' | 'attention.resolved' | 'attention.timeout';

/**
 * What the engine needs of an emitter. {@link EmitterConnection} is one; adapters with their own
 * uplink wrap it (the connection keeps seq/epoch, dedupe and re-acks, AEP-0004 §3).
 */
export interface AttentionPort {
  /** Capture ceiling; requested captures are clamped to it. */
  readonly ceiling: CaptureLevel;
  /** `agent` is used in synthesized prompts. */
  readonly options: { readonly agent: string };
  emit(session: string, type: string, data?: Record<string, unknown>, attrs?: EmitAttributes): WireEvent;
  onCommand(type: string, handler: CommandHandler): () => void;
}

/**
 * How a request ended. `answer` holds the validated, applied answer (not capture-gated).
 * `refusal` says that the person refused a form (contract C2, docs/decisions.md "Declining a
 * form"): `decline` comes as `answered` (recorded `attention.answered{option:"decline"}`),
 * `cancel` as `dismissed` (recorded `attention.resolved{dismissed}`, cause = the command).
 * `result` is what the request's `validate` hook handed back (`{ ok: true, result }`).
 * `rule` is the policy rule a delegate's answer named (`policyrule`, issue 18): the request was
 * then recorded `attention.resolved{resolution:"auto"}`.
 */
export type AttentionOutcome =
  | {
      status: 'answered';
      requestId: string;
      answer: Answer;
      by?: string;
      via: 'control' | 'oob';
      commandId?: string;
      refusal?: 'decline';
      result?: unknown;
      rule?: string;
    }
  | { status: 'timeout'; requestId: string }
  | { status: 'dismissed'; requestId: string; reason?: string; refusal?: 'cancel'; by?: string; via?: 'control' | 'oob'; commandId?: string };

/** The promise returned by `requestAttention`, with the request id known at once. */
export type AttentionPromise = Promise<AttentionOutcome> & { readonly id: string; readonly event: WireEvent };

/** Options of {@link AttentionEngine}. */
export interface AttentionEngineOptions {
  /** Default capture of lifecycle events; default the connection's ceiling. */
  capture?: CaptureLevel;
  /** Redaction options for text at `redacted` (AEP-0003 §9.4). */
  redact?: RedactOptions;
  /** How many resolved request ids to remember for "already resolved" refusals; default 10 000. */
  resolvedMemory?: number;
  /**
   * Capture of the follow-up events; default: `attention.answered` at the request's capture,
   * `attention.resolved`/`attention.timeout` at `metadata`. At `none` they carry no data.
   */
  lifecycleCapture?: (type: AttentionLifecycleType, requestCapture: CaptureLevel) => CaptureLevel;
  /** Clock for `latency_ms`/`after_ms` (tests); default `Date.now`. */
  now?: () => number;
  /** Diagnostics: a follow-up event that could not be emitted (the request still settles). */
  log?: (line: string) => void;
  /** Expiry timers do not keep the process alive (a bridge that exits with its server); default false. */
  unrefTimers?: boolean;
}
