// Emitter-side envelope builder (AEP-0001 §5, §5.4, §7): monotonic ULID ids, per-session `seq`,
// `epoch`, defaults omitted (never null), coded refusal of illegal extension attributes, and a
// final check that every built event passes validateEvent in emitter mode (AEP-0001 §10).
import { monotonicFactory } from './ulid.js';
import { AepError } from './errors.js';
import type { Issue } from './issue.js';
import type { CaptureLevel, Severity } from './levels.js';
import { CORE_ATTRIBUTES, ATTRIBUTE_NAME_PATTERN } from './generated/registry.js';
import type { AepEvent } from './generated/types.js';
import { scopeClass } from './envelope.js';
import { validateEvent } from './validate.js';

/** Scalar value of an extension attribute (AEP-0001 §5.4). */
export type ExtensionValue = string | number | boolean;

const CORE = new Set<string>(CORE_ATTRIBUTES);
const NAME_RE = new RegExp(ATTRIBUTE_NAME_PATTERN);

/**
 * Refuses an illegal extension attribute (AEP-0001 §5.4: the producing library MUST refuse, and
 * nothing is emitted): a core name, a name outside `[a-z0-9]{1,20}`, or a value that is not a
 * string, integer or boolean. Throws `AepError('AEP_EXT_INVALID')`.
 */
export function checkExtensionAttributes(ext: Readonly<Record<string, unknown>>): void {
  for (const name of Object.keys(ext)) {
    const v = ext[name];
    if (CORE.has(name)) {
      throw new AepError('AEP_EXT_INVALID', `extension attribute "${name}" collides with a core attribute name (AEP-0001 §5.4)`);
    }
    if (!NAME_RE.test(name)) {
      throw new AepError('AEP_EXT_INVALID', `extension attribute name "${name}" is ill-formed: it must match [a-z0-9]{1,20} (AEP-0001 §5.4)`);
    }
    const ok = typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isInteger(v));
    if (!ok) {
      throw new AepError(
        'AEP_EXT_INVALID',
        `extension attribute "${name}" must be a string, integer or boolean, got ${v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'non-integer number' : typeof v} (AEP-0001 §5.4)`,
      );
    }
  }
}

/** An event refused by the builder because it would not be valid AEP (AEP-0001 §10). */
export class AepEventError extends AepError {
  /** The validation issues that caused the refusal. */
  readonly issues: Issue[];
  constructor(message: string, issues: Issue[]) {
    super('AEP_EVENT_INVALID', message);
    this.name = 'AepEventError';
    this.issues = issues;
  }
}

/** Options of {@link createEmitter}. */
export interface EmitterOptions {
  /** Envelope `source` (a URI, e.g. `aep://host/agent/{agent}/session/{session}`). */
  source: string;
  /** Envelope `agent`: stable logical identity of the emitter. */
  agent: string;
  /** Default `session` for session-scoped and foreign events that name none. */
  session?: string;
  /** Counter generation for sessions this emitter owns (default 0, omitted on the wire when 0). */
  epoch?: number;
  /** Default `capture` (omitted when `metadata`, the protocol default). */
  capture?: CaptureLevel;
  /** Extension attributes added to every event (checked once, here). */
  extensions?: Readonly<Record<string, ExtensionValue>>;
  /** Clock in ms since the epoch (default `Date.now`). */
  now?: () => number;
  /** Random source in [0, 1) for ULIDs (default: `globalThis.crypto.getRandomValues`). */
  random?: () => number;
  /** Validate every built event with validateEvent in emitter mode (default true). */
  validate?: boolean;
}

/** What the caller supplies for one event; everything else is filled in by the builder. */
export interface EventInput {
  type: string;
  data?: Record<string, unknown>;
  subject?: string;
  session?: string;
  run?: string;
  step?: string;
  cause?: string;
  traceparent?: string;
  severity?: Severity;
  capture?: CaptureLevel;
  /** Override the generated id (e.g. to re-emit a recorded event); default a monotonic ULID. */
  id?: string;
  /** Override the time (RFC 3339); default the clock. */
  time?: string;
  /** Extension attributes for this event only. */
  extensions?: Readonly<Record<string, ExtensionValue>>;
}

/** Position state of one session owned by this emitter (AEP-0001 §7). */
export interface SessionPosition {
  epoch: number;
  /** The `seq` the next event of this session gets. */
  nextSeq: number;
}

/**
 * Builds AEP events for one emitter identity (`source` + `agent`). Ids are monotonic ULIDs;
 * session-scoped events get the session's next `seq` (strictly increasing within an epoch,
 * AEP-0001 §7.2); foreign-emitter events (commands, `attention.routed`) and agent-scoped events
 * get no `seq`. Optional attributes at their default are omitted, never `null`.
 */
export class EventBuilder {
  readonly source: string;
  readonly agent: string;
  private readonly defaultSession: string | undefined;
  private readonly defaultEpoch: number;
  private readonly defaultCapture: CaptureLevel | undefined;
  private readonly extensions: Readonly<Record<string, ExtensionValue>>;
  private readonly now: () => number;
  private readonly ulid: (seedTime?: number) => string;
  private readonly check: boolean;
  private readonly positions = new Map<string, SessionPosition>();

  constructor(opts: EmitterOptions) {
    if (typeof opts.source !== 'string' || opts.source.length === 0)
      throw new AepError('AEP_EMITTER_OPTIONS', 'source must be a non-empty URI (AEP-0001 §5.1)');
    if (typeof opts.agent !== 'string' || opts.agent.length === 0)
      throw new AepError('AEP_EMITTER_OPTIONS', 'agent must be a non-empty string (AEP-0001 §5.1)');
    const epoch = opts.epoch ?? 0;
    if (!Number.isInteger(epoch) || epoch < 0) throw new AepError('AEP_EMITTER_OPTIONS', 'epoch must be an integer >= 0 (AEP-0001 §5.1)');
    checkExtensionAttributes(opts.extensions ?? {});
    this.source = opts.source;
    this.agent = opts.agent;
    this.defaultSession = opts.session;
    this.defaultEpoch = epoch;
    this.defaultCapture = opts.capture === 'metadata' ? undefined : opts.capture;
    this.extensions = { ...(opts.extensions ?? {}) };
    this.now = opts.now ?? Date.now;
    this.ulid = monotonicFactory(opts.random);
    this.check = opts.validate ?? true;
  }

  /** A fresh monotonic ULID (AEP-0001 §5.1: ULID recommended, unique per source). */
  nextId(): string {
    return this.ulid(this.now());
  }

  /** Current position of a session (its epoch and the seq its next event gets). */
  position(session: string): SessionPosition {
    const p = this.positions.get(session);
    return p ? { ...p } : { epoch: this.defaultEpoch, nextSeq: 0 };
  }

  /**
   * Sets a session's position, e.g. after a restart with a new epoch (AEP-0001 §7.2: a
   * non-durable counter restarts in a higher epoch; epochs never go back). Refuses an epoch
   * below the current one, and a seq that would repeat or go back within the same epoch.
   */
  setPosition(session: string, pos: SessionPosition): void {
    if (!Number.isInteger(pos.epoch) || pos.epoch < 0 || !Number.isInteger(pos.nextSeq) || pos.nextSeq < 0) {
      throw new AepError('AEP_POSITION_INVALID', 'epoch and nextSeq must be integers >= 0 (AEP-0001 §5.1)');
    }
    const cur = this.position(session);
    if (pos.epoch < cur.epoch)
      throw new AepError('AEP_POSITION_INVALID', `epoch ${pos.epoch} is below the session's epoch ${cur.epoch}: epochs are never reused (AEP-0001 §7.2)`);
    if (pos.epoch === cur.epoch && pos.nextSeq < cur.nextSeq)
      throw new AepError('AEP_POSITION_INVALID', `seq ${pos.nextSeq} would repeat positions of epoch ${cur.epoch} (AEP-0001 §7.2)`);
    this.positions.set(session, { epoch: pos.epoch, nextSeq: pos.nextSeq });
  }

  /**
   * Builds one event. Throws `AepError('AEP_EXT_INVALID')` for an illegal extension attribute
   * and `AepEventError` (`AEP_EVENT_INVALID`, with `issues`) when the result would not be valid
   * AEP; in both cases nothing is consumed (no seq is used up).
   */
  build(input: EventInput): AepEvent {
    const ext = input.extensions;
    if (ext) {
      checkExtensionAttributes(ext);
      for (const k of Object.keys(ext)) {
        if (k in this.extensions)
          throw new AepError(
            'AEP_EXT_INVALID',
            `extension attribute "${k}" is already set by the emitter: silent last-write-wins merging is forbidden (AEP-0001 §5.4)`,
          );
      }
    }
    const type = input.type;
    const cls = typeof type === 'string' ? scopeClass(type) : 'session';
    const session = cls === 'agent' ? input.session : (input.session ?? this.defaultSession);
    const ms = this.now();
    const e: Record<string, unknown> = {
      aep: '0.1',
      id: input.id ?? this.ulid(ms),
      type,
    };
    if (input.subject !== undefined) e['subject'] = input.subject;
    e['time'] = input.time ?? new Date(ms).toISOString();
    e['source'] = this.source;
    e['agent'] = this.agent;
    if (session !== undefined) e['session'] = session;
    if (input.run !== undefined) e['run'] = input.run;
    if (input.step !== undefined) e['step'] = input.step;
    let pos: SessionPosition | undefined;
    if (cls === 'session' && session !== undefined) {
      pos = this.position(session);
      e['seq'] = pos.nextSeq;
      if (pos.epoch !== 0) e['epoch'] = pos.epoch;
    }
    if (input.cause !== undefined) e['cause'] = input.cause;
    if (input.traceparent !== undefined) e['traceparent'] = input.traceparent;
    if (input.severity !== undefined && input.severity !== 'info') e['severity'] = input.severity;
    const capture = input.capture ?? this.defaultCapture;
    if (capture !== undefined && capture !== 'metadata') e['capture'] = capture;
    for (const [k, v] of Object.entries(this.extensions)) e[k] = v;
    if (ext) for (const [k, v] of Object.entries(ext)) e[k] = v;
    if (input.data !== undefined) e['data'] = input.data;
    if (this.check) {
      const issues = validateEvent(e, { emitter: true });
      if (issues.length > 0) {
        throw new AepEventError(`refusing to emit an invalid ${String(type)} event: ${issues.map((i) => `${i.rule} at ${i.path || '/'}`).join('; ')}`, issues);
      }
    }
    if (pos !== undefined && session !== undefined) this.positions.set(session, { epoch: pos.epoch, nextSeq: pos.nextSeq + 1 });
    return e as AepEvent;
  }
}

/** Creates an {@link EventBuilder} for one emitter identity. */
export function createEmitter(opts: EmitterOptions): EventBuilder {
  return new EventBuilder(opts);
}
