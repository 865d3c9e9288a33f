// The pure mapping: Claude Code hook input -> AEP event drafts (AEP-0002 Annex A; integrations.md
// §1, §3; protocol brief 03 §7). No I/O: the caller supplies the clock and decides where the
// drafts go (the daemon emits them through its relay connection; `aep claude-code map` prints them).
import type { CaptureLevel, Severity } from '@aep/protocol';
import type { AttentionRequestInput, BuildAttentionRequestOptions, FieldSpec } from '@aep/protocol';
import { APPROVAL_DIGEST_ATTR, approvalDigest, buildAttentionRequestData, elicitationToForm, redact } from '@aep/protocol';
import { approvalText } from './approval.js';
import type { MappingConfig } from './config.js';
import { captureFor } from './config.js';
import { contentDigest, fullAllowed, gatedText, gatedValue, textAllowed } from './content.js';
import type { AskQuestion, HookInput } from './hook-input.js';
import { askQuestions } from './hook-input.js';

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

interface OobRequest {
  ref: string;
  /** What closes it: any later activity, or only the matching ElicitationResult / activity. */
  closeOn: 'activity' | 'elicitation-result';
  server?: string;
  opened: number;
  options?: string[];
}

interface SessionState {
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

const SAFE_ID = /[^A-Za-z0-9._-]/g;

/** Keeps a session/run id within `[A-Za-z0-9._-]`, starting alphanumeric (AEP-0003 §9.6). */
export function safeId(raw: string): string {
  let s = raw.replace(SAFE_ID, '_');
  if (!/^[A-Za-z0-9]/.test(s)) s = `s${s}`;
  return s.slice(0, 200);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The AEP-0003 §9.2 structural prompt: `"{agent} requests {kind}: {subject}"`. */
export function structuralPrompt(agent: string, kind: string, subject?: string): string {
  return subject ? `${agent} requests ${kind}: ${subject}` : `${agent} requests ${kind}`;
}

/** Maps `SessionEnd.reason` to `session.ended.reason` (closed enum, AEP-0002 §5.3). */
function endReason(reason: unknown): 'normal' | 'error' | 'timeout' | 'killed' | 'compaction' {
  switch (reason) {
    case 'error': return 'error';
    case 'timeout': return 'timeout';
    case 'killed': return 'killed';
    default: return 'normal';
  }
}

/**
 * Stateful mapper for one adapter process: tracks sessions, runs (= Claude Code turns), open
 * tool calls and informational requests so terminals pair with their starts (AEP-0002 §2 rule 1)
 * and every request it opened is closed (AEP-0002 §7.2). Deterministic given the clock values.
 */
export class ClaudeCodeMapper {
  private readonly sessions = new Map<string, SessionState>();
  private refCounter = 0;

  /**
   * Tells the mapper whether a controllable (answerable) request is pending in a session, so a
   * Notification about the same dialog does not open a duplicate informational request.
   */
  pendingProbe: (session: string) => boolean = () => false;

  constructor(readonly config: MappingConfig) {}

  /** Whether the Claude Code session (its sanitized id, or a child key) is started and not ended. */
  isOpen(key: string): boolean {
    const s = this.sessions.get(key);
    return s !== undefined && !s.ended;
  }

  /** The current run of a Claude Code session (sanitized id), if a turn is in progress. */
  currentRun(key: string): string | undefined {
    return this.sessions.get(key)?.run?.id;
  }

  /** Key (and first-generation AEP id) of a subagent's child session. */
  private childKey(parent: SessionState, agentId: string): string {
    return safeId(`${parent.id}.${agentId}`);
  }

  private cap(type: string): CaptureLevel {
    return captureFor(this.config, type);
  }

  private newRef(prefix: string): string {
    this.refCounter += 1;
    return `${prefix}#${this.refCounter}`;
  }

  /** Draft with capture applied: at `none` the payload is omitted (AEP-0001 §8.2). */
  private draft(type: string, s: SessionState, data: Record<string, unknown> | undefined, extra: Partial<EventDraft> = {}): EventDraft {
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
  private ensure(key: string, now: number, out: EventDraft[], hook: HookInput, parent?: { session: string; run?: string; agentType?: string }, reopen = false): SessionState {
    const old = this.sessions.get(key);
    if (old && (!old.ended || !reopen)) return old;
    const gen = old ? old.gen + 1 : 0;
    const s: SessionState = { id: gen === 0 ? key : `${key}.r${gen}`, started: now, runs: 0, tools: new Map(), oob: [], children: new Map(), ended: false, gen };
    if (parent) s.parent = parent.session;
    this.sessions.set(key, s);
    if (this.sessions.size > 10_000) {
      for (const [k, v] of this.sessions) { if (v.ended) { this.sessions.delete(k); break; } }
    }
    const type = 'session.started';
    const cap = this.cap(type);
    const data: Record<string, unknown> = { client: { name: 'claude-code' } };
    if (parent) {
      const p: Record<string, unknown> = { session: parent.session, agent: this.config.agent };
      if (parent.run) p['run'] = parent.run;
      data['parent'] = p;
    }
    const model = str(hook['model']);
    if (model && !parent) data['gen_ai.request.model'] = model;
    const cwd = str(hook.cwd);
    if (cwd) {
      const c = gatedText(this.config, cap, cwd);
      if (c !== undefined) data['cwd'] = c;
    }
    out.push(this.draft(type, s, data));
    return s;
  }

  /** Resolves the session a hook belongs to: the subagent's child session when `agent_id` is set. */
  private sessionOf(hook: HookInput, now: number, out: EventDraft[]): SessionState {
    const parentId = safeId(hook.session_id);
    const parent = this.ensure(parentId, now, out, hook);
    const agentId = str(hook.agent_id);
    if (!agentId) return parent;
    const childId = this.childKey(parent, agentId);
    const known = this.sessions.get(childId);
    if (known) return known;
    // A subagent we did not see start (daemon started mid-turn): open it with lineage.
    const p: { session: string; run?: string; agentType?: string } = { session: parent.id };
    if (parent.run) p.run = parent.run.id;
    const child = this.ensure(childId, now, out, hook, p);
    parent.children.set(agentId, { started: now, ...(hook.agent_type ? { agentType: hook.agent_type } : {}) });
    return child;
  }

  /** Closes informational (oob) requests that later activity shows were handled in the terminal. */
  private closeOob(s: SessionState, out: EventDraft[], now: number, filter: (o: OobRequest) => boolean, answer: Record<string, unknown> = {}): void {
    const keep: OobRequest[] = [];
    for (const o of s.oob) {
      if (!filter(o)) { keep.push(o); continue; }
      const answeredRef = this.newRef('answered');
      // AEP-0008 §2: an answer that arrived out of band is recorded with via "oob"; we record only
      // what we know (the applied option when the vendor tells us, otherwise an empty answer).
      out.push(this.draft('attention.answered', s, { answer, via: 'oob' }, { subjectRef: o.ref, causeRef: o.ref, ref: answeredRef }));
      out.push(this.draft('attention.resolved', s, { resolution: 'answered', latency_ms: Math.max(0, now - o.opened) }, { subjectRef: o.ref, causeRef: answeredRef }));
    }
    s.oob = keep;
  }

  private dismissOob(s: SessionState, out: EventDraft[], now: number): void {
    for (const o of s.oob) {
      out.push(this.draft('attention.resolved', s, { resolution: 'dismissed', latency_ms: Math.max(0, now - o.opened) }, { subjectRef: o.ref, causeRef: o.ref }));
    }
    s.oob = [];
  }

  /** Opens an informational request (respond_via ["oob"]): the decision is made in the terminal. */
  private openOob(s: SessionState, out: EventDraft[], now: number, o: Omit<OobRequest, 'ref' | 'opened'>, data: Record<string, unknown> | undefined, subject?: string): void {
    const ref = this.newRef('oob');
    const extra: Partial<EventDraft> = { ref, severity: 'notice' };
    if (subject) extra.subject = subject;
    out.push(this.draft('attention.requested', s, data, extra));
    s.oob.push({ ...o, ref, opened: now });
  }

  private endRun(s: SessionState, out: EventDraft[], now: number, type: 'run.finished' | 'run.cancelled' | 'run.failed', extra: Record<string, unknown> = {}): void {
    if (!s.run) return;
    const data = { ...extra, duration_ms: Math.max(0, now - s.run.started) };
    out.push(this.draft(type, s, data, { run: s.run.id, causeRef: s.run.ref }));
    s.run = undefined;
  }

  private endSession(s: SessionState, out: EventDraft[], now: number, reason: ReturnType<typeof endReason>): void {
    if (s.ended) return;
    this.dismissOob(s, out, now);
    this.endRun(s, out, now, 'run.cancelled', { by: 'shutdown' });
    out.push(this.draft('session.ended', s, { reason, duration_ms: Math.max(0, now - s.started), runs: s.runs }));
    s.ended = true;
  }

  /**
   * Maps one hook. `now` is the wall clock in ms (durations only). Never throws for a parsed
   * {@link HookInput}; unknown hook names map to nothing (`ignored`).
   */
  map(hook: HookInput, now: number): MapResult {
    const out: EventDraft[] = [];
    const dismiss: DismissRule[] = [];
    const name = hook.hook_event_name;
    const cfg = this.config;

    if (name === 'SessionStart') {
      const id = safeId(hook.session_id);
      const existing = this.sessions.get(id);
      const s = this.ensure(id, now, out, hook, undefined, true);
      if (existing && !existing.ended && hook['source'] === 'compact') this.compacted(s, out, 'auto');
      return { session: s.id, dismiss, events: out };
    }

    // Subagent lifecycle hooks belong to the parent session (their agent_id names the child).
    const s = name === 'SubagentStart' || name === 'SubagentStop'
      ? this.ensure(safeId(hook.session_id), now, out, hook)
      : this.sessionOf(hook, now, out);
    const toolName = str(hook.tool_name) ?? '';
    const toolUseId = str(hook.tool_use_id);
    const tool: Record<string, unknown> = toolUseId ? { name: toolName, call_id: toolUseId } : { name: toolName };
    // A tool call reached its end (completed, failed, denied): a question still held for it was
    // answered elsewhere (dismissed), and the terminal event is cause-linked to tool.requested.
    const closeTool = (): { open: { started: number; ref: string } | undefined; extra: Partial<EventDraft> } => {
      if (toolUseId) dismiss.push({ session: s.id, toolUseId });
      dismiss.push({ session: s.id, toolName, inputDigest: contentDigest(hook.tool_input ?? {}) });
      const open = toolUseId ? s.tools.get(toolUseId) : undefined;
      if (toolUseId) s.tools.delete(toolUseId);
      const extra: Partial<EventDraft> = { subject: toolName };
      if (open) extra.causeRef = open.ref;
      return { open, extra };
    };

    // Informational requests are closed by the next sign that the agent moved on (AEP-0002 §7.2).
    if (name !== 'Notification' && name !== 'SessionEnd' && name !== 'ElicitationResult' && name !== 'Elicitation') {
      this.closeOob(s, out, now, (o) => o.closeOn === 'activity' || name === 'PostToolUse' || name === 'PostToolUseFailure' || name === 'Stop' || name === 'UserPromptSubmit');
    }

    switch (name) {
      case 'SessionEnd': {
        dismiss.push({ session: s.id, all: true });
        for (const [agentId] of s.children) {
          const child = this.sessions.get(this.childKey(s, agentId));
          if (child) { dismiss.push({ session: child.id, all: true }); this.endSession(child, out, now, 'normal'); }
        }
        this.endSession(s, out, now, endReason(hook['reason']));
        break;
      }
      case 'UserPromptSubmit': {
        // A turn interrupted by the user never gets Stop: the next prompt ends it as cancelled.
        if (s.run) this.endRun(s, out, now, 'run.cancelled', { by: 'user' });
        s.runs += 1;
        const runId = safeId(`t${s.runs}-${now.toString(36)}`);
        const ref = this.newRef('run');
        s.run = { id: runId, started: now, ref };
        const data: Record<string, unknown> = { trigger: 'user' };
        const prompt = typeof hook['prompt'] === 'string' ? gatedText(cfg, this.cap('run.started'), hook['prompt']) : undefined;
        if (prompt !== undefined) data['prompt'] = prompt;
        out.push(this.draft('run.started', s, data, { run: runId, ref }));
        break;
      }
      case 'Stop': {
        const summary = typeof hook['last_assistant_message'] === 'string' ? gatedText(cfg, this.cap('run.finished'), hook['last_assistant_message']) : undefined;
        this.endRun(s, out, now, 'run.finished', summary !== undefined ? { summary } : {});
        break;
      }
      case 'StopFailure': {
        const err: Record<string, unknown> = {};
        const t = str(hook['error_type']) ?? str(hook['error']);
        if (t && /^[A-Za-z0-9_.-]{1,64}$/.test(t)) err['type'] = t;
        this.endRun(s, out, now, 'run.failed', { reason: 'error', error: err });
        break;
      }
      case 'SubagentStart': {
        const agentId = str(hook.agent_id);
        // Claude Code sends SubagentStart with the child's agent_id; the parent is session_id.
        const parent = s;
        if (!agentId) break;
        const childId = this.childKey(parent, agentId);
        const child: Record<string, unknown> = { session: childId, agent: cfg.agent };
        const data: Record<string, unknown> = { child };
        if (hook.agent_type) data['agent_type'] = hook.agent_type;
        const ref = this.newRef('delegation');
        out.push(this.draft('delegation.subagent.started', parent, data, { ref }));
        if (!this.isOpen(childId)) {
          const p: { session: string; run?: string } = { session: parent.id };
          if (parent.run) p.run = parent.run.id;
          const cs = this.ensure(childId, now, out, hook, p, true);
          child['session'] = cs.id;
          cs.runs += 1;
          const runRef = this.newRef('run');
          cs.run = { id: safeId(`sub-${cs.runs}-${now.toString(36)}`), started: now, ref: runRef };
          out.push(this.draft('run.started', cs, { trigger: 'agent' }, { run: cs.run.id, ref: runRef, causeRef: ref }));
        }
        parent.children.set(agentId, { started: now, ...(hook.agent_type ? { agentType: hook.agent_type } : {}) });
        break;
      }
      case 'SubagentStop': {
        const agentId = str(hook.agent_id);
        const parent = s;
        const data: Record<string, unknown> = { status: 'completed' };
        if (hook.agent_type) data['agent_type'] = hook.agent_type;
        if (agentId) {
          const childId = this.childKey(parent, agentId);
          data['child'] = { session: this.sessions.get(childId)?.id ?? childId, agent: cfg.agent };
          const info = parent.children.get(agentId);
          if (info) data['duration_ms'] = Math.max(0, now - info.started);
          parent.children.delete(agentId);
          const cs = this.sessions.get(childId);
          if (cs && !cs.ended) {
            dismiss.push({ session: cs.id, all: true });
            this.dismissOob(cs, out, now);
            this.endRun(cs, out, now, 'run.finished');
            this.endSession(cs, out, now, 'normal');
          }
        }
        out.push(this.draft('delegation.subagent.stopped', parent, data));
        break;
      }
      case 'PreToolUse': {
        const ref = this.newRef('tool');
        if (toolUseId) s.tools.set(toolUseId, { started: now, ref });
        out.push(this.draft('tool.requested', s, this.argsData(tool, hook.tool_input, 'tool.requested'), { ref, subject: toolName }));
        if (toolName === 'AskUserQuestion') {
          const spec = this.askSpec(s, hook, ref);
          return { session: s.id, dismiss, events: out, attention: spec };
        }
        break;
      }
      case 'PostToolUse':
      case 'PostToolUseFailure': {
        const { open, extra } = closeTool();
        if (name === 'PostToolUse') {
          const type = 'tool.completed';
          const cap = this.cap(type);
          const data: Record<string, unknown> = { tool, status: 'success' };
          if (open) data['duration_ms'] = Math.max(0, now - open.started);
          const resp = hook['tool_response'];
          if (resp !== undefined) {
            data['result_digest'] = contentDigest(resp);
            if (fullAllowed(cap) && (isObject(resp) || typeof resp === 'string')) data['result'] = resp;
            else if (textAllowed(cap) && (isObject(resp) || typeof resp === 'string')) data['result_redacted'] = gatedValue(cfg, cap, resp);
          }
          out.push(this.draft(type, s, data, extra));
        } else {
          const type = 'tool.failed';
          const err: Record<string, unknown> = { type: hook['is_interrupt'] === true ? 'interrupted' : 'tool_error' };
          if (typeof hook['error'] === 'string') {
            const m = gatedText(cfg, this.cap(type), hook['error']);
            if (m !== undefined) err['message'] = m;
          }
          const data: Record<string, unknown> = { tool, error: err };
          if (open) data['duration_ms'] = Math.max(0, now - open.started);
          out.push(this.draft(type, s, data, extra));
        }
        break;
      }
      case 'PermissionDenied': {
        // No human was asked: Claude Code's auto-mode classifier / permission rules refused it.
        const { extra } = closeTool();
        out.push(this.draft('tool.denied', s, { tool, by: 'policy' }, extra));
        break;
      }
      case 'PermissionRequest': {
        // Questions are answered through PreToolUse (integrations.md §1), never here.
        if (toolName === 'AskUserQuestion') break;
        return { session: s.id, dismiss, events: out, attention: this.permissionSpec(s, hook) };
      }
      case 'Notification': {
        this.notification(s, hook, out, now);
        break;
      }
      case 'PreCompact': {
        const ref = this.newRef('compact');
        s.compactRef = ref;
        const trigger = str(hook['trigger']);
        if (trigger) s.compactTrigger = trigger;
        const data: Record<string, unknown> = { phase: 'compacting' };
        out.push(this.draft('progress.status', s, data, { ref }));
        break;
      }
      case 'PostCompact': {
        this.compacted(s, out, str(hook['trigger']) ?? s.compactTrigger);
        break;
      }
      case 'Elicitation': {
        return this.elicitation(s, hook, out, now, dismiss);
      }
      case 'ElicitationResult': {
        const server = str(hook['mcp_server_name']);
        if (server) dismiss.push({ session: s.id, server });
        const action = str(hook['action']);
        const answer: Record<string, unknown> = action && ['accept', 'decline', 'cancel'].includes(action) ? { option: action } : {};
        this.closeOob(s, out, now, (o) => o.closeOn === 'elicitation-result' && (o.server === undefined || o.server === server), answer);
        break;
      }
      default:
        return { session: s.id, dismiss, events: out, ignored: name };
    }
    return { session: s.id, dismiss, events: out };
  }

  private compacted(s: SessionState, out: EventDraft[], trigger: string | undefined): void {
    const data: Record<string, unknown> = {};
    if (trigger && /^[A-Za-z0-9_.-]{1,32}$/.test(trigger)) data['trigger'] = trigger;
    const extra: Partial<EventDraft> = {};
    if (s.compactRef) extra.causeRef = s.compactRef;
    out.push(this.draft('session.compacted', s, data, extra));
    s.compactRef = undefined;
    s.compactTrigger = undefined;
  }

  /** tool.requested payload: digest of the original args, then args at the event's level. */
  private argsData(tool: Record<string, unknown>, input: Record<string, unknown> | undefined, type: string): Record<string, unknown> {
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
  private redaction(): { home?: string; secretValues?: string[]; pii?: boolean } {
    const o: { home?: string; secretValues?: string[]; pii?: boolean } = {};
    if (this.config.home !== undefined) o.home = this.config.home;
    if (this.config.secretValues !== undefined) o.secretValues = this.config.secretValues;
    if (this.config.pii !== undefined) o.pii = this.config.pii;
    return o;
  }

  /** `attention.requested` data at the type's capture level via the shared builder (AEP-0003 §9.2). */
  private requestData(input: AttentionRequestInput, subject: string | undefined, synthesize?: (i: AttentionRequestInput) => string, placeholder?: 'index'): Record<string, unknown> | undefined {
    const opts: BuildAttentionRequestOptions = { agent: this.config.agent, redaction: this.redaction() };
    if (placeholder) opts.placeholder = placeholder;
    if (subject !== undefined) opts.subject = subject;
    if (synthesize) opts.synthesize = synthesize;
    const data = buildAttentionRequestData(input, this.cap('attention.requested'), opts);
    return data as Record<string, unknown> | undefined;
  }

  /**
   * AskUserQuestion -> one `kind:"form"` request whose `data` is exactly the Annex A pin
   * (integrations.md §3; brief 03 §7): `{kind, prompt, fields, respond_via:["control"]}`, one
   * `select` per question with 1-based index ids, label `"{header}: {question}"`, `required` and
   * `other` on every field, `multi:true` only where `multiSelect` is true, prompt
   * `"{agent} asks {n} questions"` at every level; at `metadata` labels become index placeholders.
   */
  private askSpec(s: SessionState, hook: HookInput, toolRef: string): AttentionSpec {
    const questions = askQuestions(hook.tool_input);
    const fields: FieldSpec[] = questions.map((q, i) => {
      const f: FieldSpec = { id: String(i + 1), type: 'select', label: q.header ? `${q.header}: ${q.question}` : q.question, required: true };
      if (q.multiSelect === true) f.multi = true;
      f.other = true;
      f.choices = q.options.map((o, j) => ({ id: String(j + 1), label: o.label }));
      return f;
    });
    const prompt = `${this.config.agent} asks ${questions.length} questions`;
    const input: AttentionRequestInput = { kind: 'form', prompt, fields, respond_via: ['control'] };
    const data = this.requestData(input, 'AskUserQuestion', () => prompt, 'index');
    const request = this.draft('attention.requested', s, data, { subject: 'AskUserQuestion', severity: 'notice', causeRef: toolRef, ref: this.newRef('attention') });
    const spec: AttentionSpec = { hook: 'ask', request, toolName: 'AskUserQuestion', questions, fields };
    if (hook.tool_use_id) spec.toolUseId = hook.tool_use_id;
    if (hook.tool_input) spec.toolInput = hook.tool_input;
    return spec;
  }

  /**
   * PermissionRequest -> `kind:"permission"` whose prompt is the approval text: the complete tool
   * input the decision applies to, verbatim (contract C1; approval.ts), at the request's capture
   * (verbatim at `full`, the §9.4 pipeline at `redacted`, synthesized at `metadata`), with the
   * `approvaldigest` of the original text at every level and `context.tool_input` at `full`.
   */
  private permissionSpec(s: SessionState, hook: HookInput): AttentionSpec {
    const toolName = hook.tool_name ?? '';
    const toolInput = hook.tool_input ?? {};
    const text = approvalText(toolName, toolInput);
    const options = [{ id: 'allow', label: 'Allow' }, { id: 'deny', label: 'Deny' }];
    const input: AttentionRequestInput = { kind: 'permission', prompt: text, options, respond_via: ['control'], context: { tool_input: toolInput } };
    const data = this.requestData(input, toolName);
    const request = this.draft('attention.requested', s, data, {
      subject: toolName, severity: 'notice', ref: this.newRef('attention'),
      extensions: { [APPROVAL_DIGEST_ATTR]: approvalDigest(text) },
    });
    const spec: AttentionSpec = { hook: 'permission', request, toolName, toolInput, inputDigest: contentDigest(toolInput), options, approvalText: text };
    if (hook.tool_use_id) spec.toolUseId = hook.tool_use_id;
    return spec;
  }

  /** Elicitation: form mode -> answerable `kind:"form"`; URL mode / unmappable -> informational. */
  private elicitation(s: SessionState, hook: HookInput, out: EventDraft[], now: number, dismiss: DismissRule[]): MapResult {
    const type = 'attention.requested';
    const cap = this.cap(type);
    const cfg = this.config;
    const server = str(hook['mcp_server_name']);
    const message = typeof hook['message'] === 'string' ? hook['message'] : '';
    const mode = str(hook['mode']) ?? 'form';
    if (mode === 'form') {
      const schema = hook['requested_schema'] ?? hook['requestedSchema'];
      const params = { message, requestedSchema: schema, mode: 'form' };
      const redaction = this.redaction();
      const mapped = elicitationToForm(params, { agent: cfg.agent, capture: cap === 'none' ? 'metadata' : cap, redact: (t: string) => redact(t, redaction) });
      const real = elicitationToForm(params, { agent: cfg.agent, capture: 'full' });
      if (mapped.ok && real.ok) {
        // `data` is exactly the shared mapping's (Annex A pin): decline/cancel are answer options
        // every form accepts without being listed (contract C2).
        const extra: Partial<EventDraft> = { severity: 'notice', ref: this.newRef('attention') };
        if (server) extra.subject = server;
        const request = this.draft(type, s, { ...mapped.data }, extra);
        const spec: AttentionSpec = { hook: 'elicitation', request, schema, fields: real.data.fields };
        return { session: s.id, dismiss, events: out, attention: spec };
      }
    }
    // URL mode (and schemas a form cannot express): informational only, answered in Claude Code's
    // own dialog. We never relay a URL to open: at `metadata` it could leak, and at any level a
    // remote "open this link" button is a phishing surface (AEP-0002 §8). Documented in README.
    const menu = ['accept', 'decline', 'cancel'];
    const kind = mode === 'url' ? 'auth' : 'input';
    const data = this.requestData({
      kind,
      prompt: message || structuralPrompt(cfg.agent, kind, server),
      options: menu.map((id) => ({ id, label: id[0]!.toUpperCase() + id.slice(1) })),
      respond_via: ['oob'],
    }, server);
    const o: Omit<OobRequest, 'ref' | 'opened'> = { closeOn: 'elicitation-result', options: menu };
    if (server) o.server = server;
    this.openOob(s, out, now, o, data, server);
    return { session: s.id, dismiss, events: out };
  }

  /** Notification: attention-like subtypes become informational requests, the rest progress. */
  private notification(s: SessionState, hook: HookInput, out: EventDraft[], now: number): void {
    const cfg = this.config;
    const sub = str(hook['notification_type']);
    const message = typeof hook['message'] === 'string' ? hook['message'] : '';
    const kinds: Record<string, 'permission' | 'input'> = { permission_prompt: 'permission', idle_prompt: 'input', elicitation_dialog: 'input' };
    const kind = sub ? kinds[sub] : undefined;
    const elicitationOpen = s.oob.some((o) => o.closeOn === 'elicitation-result');
    if (kind && !(sub === 'elicitation_dialog' && elicitationOpen) && !s.oob.some((o) => o.closeOn === 'activity') && !this.pendingProbe(s.id)) {
      const data = this.requestData({
        kind,
        prompt: message || (kind === 'permission' ? 'Claude Code needs your permission' : 'Claude Code is waiting for your input'),
        respond_via: ['oob'],
      }, undefined);
      this.openOob(s, out, now, { closeOn: 'activity' }, data);
      return;
    }
    const data: Record<string, unknown> = {};
    if (sub && /^[A-Za-z0-9_.-]{1,64}$/.test(sub)) data['phase'] = sub;
    const m = message ? gatedText(cfg, this.cap('progress.status'), message) : undefined;
    if (m !== undefined) data['message'] = m;
    out.push(this.draft('progress.status', s, data));
  }
}
