// What the mapping remembers between hooks, and the helpers every hook family uses: sessions,
// runs (= Claude Code turns), open tool calls, subagents and informational requests, so terminals
// pair with their starts (AEP-0002 §2 rule 1) and every request opened is closed (AEP-0002 §7.2).
// Pure: no I/O; deterministic given the clock values the caller passes.
import type { CaptureLevel } from '@aep/protocol';
import type { AttentionRequestInput, BuildAttentionRequestOptions, RedactOptions } from '@aep/protocol';
import { buildAttentionRequestData } from '@aep/protocol';
import type { MappingConfig } from '../config.js';
import { captureFor } from '../config.js';
import { contentDigest, fullAllowed, gatedText, gatedValue, textAllowed } from '../content.js';
import type { HookInput } from '../hook-input.js';
import type { AttentionSpec, DismissRule, EventDraft } from './types.js';

/** An informational request (`respond_via:["oob"]`) the mapping opened and must close. */
export interface OobRequest {
  ref: string;
  /** What closes it: any later activity, or only the matching ElicitationResult / activity. */
  closeOn: 'activity' | 'elicitation-result';
  server?: string;
  opened: number;
  options?: string[];
}

/** One AEP session the mapping owns. */
export interface SessionState {
  id: string;
  started: number;
  runs: number;
  run?: { id: string; started: number; ref: string };
  tools: Map<string, { started: number; ref: string }>;
  oob: OobRequest[];
  compactRef?: string;
  compactTrigger?: string;
  /** Child sessions opened by SubagentStart, by agent_id. */
  children: Map<string, { started: number; agentType?: string }>;
  parent?: string;
  ended: boolean;
  /** Generation: a Claude Code session started again after it ended gets a fresh AEP session. */
  gen: number;
}

/** Everything a hook family's mapping function works with for one hook. */
export interface HookContext {
  hook: HookInput;
  now: number;
  /** The AEP session the hook belongs to. */
  s: SessionState;
  out: EventDraft[];
  dismiss: DismissRule[];
  toolName: string;
  toolUseId: string | undefined;
  /** `tool_ref` of tool events (`{name, call_id?}`). */
  tool: Record<string, unknown>;
}

/** How one hook is mapped. */
export interface HookMapping {
  /** Which session the hook belongs to: its own (a subagent's child when `agent_id` is set) or the parent's. */
  scope: 'own' | 'parent';
  /**
   * Which informational requests the hook closes first as "the agent moved on" (AEP-0002 §7.2):
   * `activity` ones (the default), `all` of them, or `none`.
   */
  closes: 'activity' | 'all' | 'none';
  /** Appends drafts to `c.out` / rules to `c.dismiss`; returns the blocking request, if any. */
  map(m: MapperState, c: HookContext): AttentionSpec | undefined;
}

const SAFE_ID = /[^A-Za-z0-9._-]/g;

/** Keeps a session/run id within `[A-Za-z0-9._-]`, starting alphanumeric (AEP-0003 §9.6). */
export function safeId(raw: string): string {
  let s = raw.replace(SAFE_ID, '_');
  if (!/^[A-Za-z0-9]/.test(s)) s = `s${s}`;
  return s.slice(0, 200);
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A non-empty string, else undefined. */
export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The AEP-0003 §9.2 structural prompt: `"{agent} requests {kind}: {subject}"`. */
export function structuralPrompt(agent: string, kind: string, subject?: string): string {
  return subject ? `${agent} requests ${kind}: ${subject}` : `${agent} requests ${kind}`;
}

/** `session.ended.reason` (closed enum, AEP-0002 §5.3). */
export type EndReason = 'normal' | 'error' | 'timeout' | 'killed' | 'compaction';

/** The session and tool bookkeeping of one adapter process, with the shared draft helpers. */
export class MapperState {
  readonly sessions = new Map<string, SessionState>();
  private refCounter = 0;

  /**
   * Tells the mapping whether a controllable (answerable) request is pending in a session, so a
   * Notification about the same dialog does not open a duplicate informational request.
   */
  pendingProbe: (session: string) => boolean = () => false;

  constructor(readonly config: MappingConfig) {}

  /** Key (and first-generation AEP id) of a subagent's child session. */
  childKey(parent: SessionState, agentId: string): string {
    return safeId(`${parent.id}.${agentId}`);
  }

  /** The capture level of events of `type` (AEP-0003 §9.1 overrides). */
  cap(type: string): CaptureLevel {
    return captureFor(this.config, type);
  }

  newRef(prefix: string): string {
    this.refCounter += 1;
    return `${prefix}#${this.refCounter}`;
  }

  /** Draft with capture applied: at `none` the payload is omitted (AEP-0001 §8.2). */
  draft(type: string, s: SessionState, data: Record<string, unknown> | undefined, extra: Partial<EventDraft> = {}): EventDraft {
    const capture = this.cap(type);
    const d: EventDraft = { type, session: s.id, capture, ...extra };
    if (s.run && d.run === undefined && !type.startsWith('session.')) d.run = s.run.id;
    if (data !== undefined && capture !== 'none') d.data = data;
    return d;
  }

  /**
   * Returns the state of a session, emitting an implicit `session.started` when unknown. Late hooks
   * after `session.ended` stay in the ended session (legal, AEP-0002 §2 rule 5); only a new
   * SessionStart (`reopen`) opens a fresh AEP session `{id}.r{n}`, so no session has two terminals.
   */
  ensure(key: string, now: number, out: EventDraft[], hook: HookInput, parent?: { session: string; run?: string }, reopen = false): SessionState {
    const old = this.sessions.get(key);
    if (old && (!old.ended || !reopen)) return old;
    const gen = old ? old.gen + 1 : 0;
    const s: SessionState = {
      id: gen === 0 ? key : `${key}.r${gen}`,
      started: now,
      runs: 0,
      tools: new Map(),
      oob: [],
      children: new Map(),
      ended: false,
      gen,
    };
    if (parent) s.parent = parent.session;
    this.sessions.set(key, s);
    if (this.sessions.size > 10_000) {
      for (const [k, v] of this.sessions) {
        if (v.ended) {
          this.sessions.delete(k);
          break;
        }
      }
    }
    const type = 'session.started';
    const cap = this.cap(type);
    const data: Record<string, unknown> = { client: { name: 'claude-code' } };
    if (parent) {
      const p: Record<string, unknown> = { session: parent.session, agent: this.config.agent };
      if (parent.run) p['run'] = parent.run;
      data['parent'] = p;
    }
    // A model name at `metadata` only when it is a structural token (never free text).
    const model = str(hook['model']);
    if (model && !parent && /^[A-Za-z0-9_.:@/[\]-]{1,100}$/.test(model)) data['gen_ai.request.model'] = model;
    const cwd = str(hook.cwd);
    if (cwd) {
      const c = gatedText(this.config, cap, cwd);
      if (c !== undefined) data['cwd'] = c;
    }
    out.push(this.draft(type, s, data));
    return s;
  }

  /** Resolves the session a hook belongs to: the subagent's child session when `agent_id` is set. */
  sessionOf(hook: HookInput, now: number, out: EventDraft[]): SessionState {
    const parent = this.ensure(safeId(hook.session_id), now, out, hook);
    const agentId = str(hook.agent_id);
    if (!agentId) return parent;
    const childId = this.childKey(parent, agentId);
    const known = this.sessions.get(childId);
    if (known) return known;
    // A subagent we did not see start (daemon started mid-turn): open it with lineage.
    const p: { session: string; run?: string } = { session: parent.id };
    if (parent.run) p.run = parent.run.id;
    const child = this.ensure(childId, now, out, hook, p);
    parent.children.set(agentId, { started: now, ...(hook.agent_type ? { agentType: hook.agent_type } : {}) });
    return child;
  }

  /** The session whose AEP id is `aepId` (a reopened session's id is `{key}.r{n}`). */
  byAepId(aepId: string): SessionState | undefined {
    const direct = this.sessions.get(aepId);
    if (direct?.id === aepId) return direct;
    for (const s of this.sessions.values()) if (s.id === aepId) return s;
    return undefined;
  }

  /** Closes informational (oob) requests that later activity shows were handled in the terminal. */
  closeOob(s: SessionState, out: EventDraft[], now: number, filter: (o: OobRequest) => boolean, answer: Record<string, unknown> = {}): void {
    const keep: OobRequest[] = [];
    for (const o of s.oob) {
      if (!filter(o)) {
        keep.push(o);
        continue;
      }
      const answeredRef = this.newRef('answered');
      // AEP-0008 §2: an answer that arrived out of band is recorded with via "oob"; we record only
      // what we know (the applied option when the vendor tells us, otherwise an empty answer).
      out.push(this.draft('attention.answered', s, { answer, via: 'oob' }, { subjectRef: o.ref, causeRef: o.ref, ref: answeredRef }));
      out.push(
        this.draft('attention.resolved', s, { resolution: 'answered', latency_ms: Math.max(0, now - o.opened) }, { subjectRef: o.ref, causeRef: answeredRef }),
      );
    }
    s.oob = keep;
  }

  dismissOob(s: SessionState, out: EventDraft[], now: number): void {
    for (const o of s.oob) {
      out.push(
        this.draft('attention.resolved', s, { resolution: 'dismissed', latency_ms: Math.max(0, now - o.opened) }, { subjectRef: o.ref, causeRef: o.ref }),
      );
    }
    s.oob = [];
  }

  /** Opens an informational request (respond_via ["oob"]): the decision is made in the terminal. */
  openOob(
    s: SessionState,
    out: EventDraft[],
    now: number,
    o: Omit<OobRequest, 'ref' | 'opened'>,
    data: Record<string, unknown> | undefined,
    subject?: string,
  ): void {
    const ref = this.newRef('oob');
    const extra: Partial<EventDraft> = { ref, severity: 'notice' };
    if (subject) extra.subject = subject;
    out.push(this.draft('attention.requested', s, data, extra));
    s.oob.push({ ...o, ref, opened: now });
  }

  endRun(
    s: SessionState,
    out: EventDraft[],
    now: number,
    type: 'run.finished' | 'run.cancelled' | 'run.failed',
    extra: Record<string, unknown> = {},
    causeRef?: string,
  ): void {
    if (!s.run) return;
    const data = { ...extra, duration_ms: Math.max(0, now - s.run.started) };
    out.push(this.draft(type, s, data, { run: s.run.id, causeRef: causeRef ?? s.run.ref }));
    s.run = undefined;
  }

  endSession(s: SessionState, out: EventDraft[], now: number, reason: EndReason): void {
    if (s.ended) return;
    this.dismissOob(s, out, now);
    this.endRun(s, out, now, 'run.cancelled', { by: 'shutdown' });
    out.push(this.draft('session.ended', s, { reason, duration_ms: Math.max(0, now - s.started), runs: s.runs }));
    s.ended = true;
  }

  compacted(s: SessionState, out: EventDraft[], trigger: string | undefined): void {
    const data: Record<string, unknown> = {};
    if (trigger && /^[A-Za-z0-9_.-]{1,32}$/.test(trigger)) data['trigger'] = trigger;
    const extra: Partial<EventDraft> = {};
    if (s.compactRef) extra.causeRef = s.compactRef;
    out.push(this.draft('session.compacted', s, data, extra));
    s.compactRef = undefined;
    s.compactTrigger = undefined;
  }

  /** tool.requested payload: digest of the original args, then args at the event's level. */
  argsData(tool: Record<string, unknown>, input: Record<string, unknown> | undefined, type: string): Record<string, unknown> {
    const cap = this.cap(type);
    const data: Record<string, unknown> = { tool };
    if (input !== undefined) {
      data['args_digest'] = contentDigest(input);
      if (fullAllowed(cap)) data['args'] = input;
      else if (textAllowed(cap)) data['args_redacted'] = gatedValue(this.config, cap, input);
    }
    return data;
  }

  /** Redaction options of the config (AEP-0003 §9.4 b-d). */
  redaction(): RedactOptions {
    const o: { home?: string; secretValues?: string[]; pii?: boolean } = {};
    if (this.config.home !== undefined) o.home = this.config.home;
    if (this.config.secretValues !== undefined) o.secretValues = this.config.secretValues;
    if (this.config.pii !== undefined) o.pii = this.config.pii;
    return o;
  }

  /** `attention.requested` data at the type's capture level via the shared builder (AEP-0003 §9.2). */
  requestData(
    input: AttentionRequestInput,
    subject: string | undefined,
    synthesize?: (i: AttentionRequestInput) => string,
    placeholder?: 'index',
    capture?: CaptureLevel,
  ): Record<string, unknown> | undefined {
    const opts: BuildAttentionRequestOptions = { agent: this.config.agent, redaction: this.redaction() };
    if (placeholder) opts.placeholder = placeholder;
    if (subject !== undefined) opts.subject = subject;
    if (synthesize) opts.synthesize = synthesize;
    const data = buildAttentionRequestData(input, capture ?? this.cap('attention.requested'), opts);
    return data as Record<string, unknown> | undefined;
  }
}
