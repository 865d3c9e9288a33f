// Shapes the mapping produces (pure data). The daemon emits drafts through its relay connection;
// `aep claude-code map` prints them as envelopes (dry-run.ts).
import type { CaptureLevel, FieldSpec, FormConstraints, Severity } from '@aep/protocol';
import type { AskQuestion } from '../hook-input.js';

/**
 * One event the adapter will emit. Envelope attributes owned by the emitter (`id`, `time`, `seq`,
 * `epoch`, `source`, `agent`) are added by whoever emits it. Correlation to earlier drafts goes
 * through local reference keys, resolved to event ids at emission time.
 */
export interface EventDraft {
  type: string;
  /** AEP session id (sanitized, AEP-0003 §9.6). */
  session: string;
  run?: string;
  subject?: string;
  severity?: Severity;
  /** The level actually applied to `data` (AEP-0003 §9.5). */
  capture: CaptureLevel;
  data?: Record<string, unknown>;
  /** Remember this event's id under this key. */
  ref?: string;
  /** `cause` = the id remembered under this key, when known. */
  causeRef?: string;
  /** `cause` = this event id (e.g. the control command a `run.cancelled` follows, AEP-0004 §6). */
  cause?: string;
  /** `subject` = the id remembered under this key, when known (attention lifecycle, AEP-0002 §7.1). */
  subjectRef?: string;
  /** Extension attributes (AEP-0001 §5.4), e.g. `approvaldigest` on a permission request (contract C1). */
  extensions?: Record<string, string>;
}

/** Which hook output an attention answer turns into. */
export type AttentionHookKind = 'ask' | 'permission' | 'elicitation';

/** A blocking, answerable request (the hook waits for its answer). */
export interface AttentionSpec {
  hook: AttentionHookKind;
  /** The `attention.requested` draft (data already at its capture level). */
  request: EventDraft;
  /** Unredacted material needed to validate answers and build the hook output. */
  toolName?: string;
  toolUseId?: string;
  /** §9.3 digest of `tool_input`, to recognise the same call later (PermissionRequest has no tool_use_id). */
  inputDigest?: string;
  toolInput?: Record<string, unknown>;
  /** The complete input the decision applies to, verbatim (contract C1; approval.ts). */
  approvalText?: string;
  questions?: AskQuestion[];
  /** MCP `requestedSchema` (Elicitation). */
  schema?: unknown;
  /** What the schema requires beyond the fields (integer-ness, lengths, format), handed to the engine as data. */
  constraints?: FormConstraints;
  /** The fields and options as offered (real labels), for validation and answer mapping. */
  fields?: FieldSpec[];
  options?: { id: string; label: string }[];
}

/** Pending controllable requests the daemon must dismiss (answered elsewhere, session over). */
export interface DismissRule {
  session: string;
  /** Dismiss requests tied to this tool call. */
  toolUseId?: string;
  /** Dismiss permission requests for this tool name + input digest. */
  toolName?: string;
  inputDigest?: string;
  /** Dismiss Elicitation requests of this MCP server. */
  server?: string;
  /** Dismiss everything pending in the session. */
  all?: boolean;
}

/** Result of mapping one hook. Order of application: `dismiss`, then `events`, then `attention`. */
export interface MapResult {
  /** The AEP session the hook belongs to. */
  session: string;
  dismiss: DismissRule[];
  events: EventDraft[];
  attention?: AttentionSpec;
  /** Hooks we do not map (unknown events) are reported here, not errors. */
  ignored?: string;
}
