// The pure mapping: Claude Code hook input -> AEP event drafts (AEP-0002 Annex A; docs/integrations.md
// §1, §3; AEP-0002 Annex A). No I/O: the caller supplies the clock and decides where the
// drafts go (the daemon emits them through its relay connection; `aep claude-code map` prints them).
// One module per hook family (mapping/*.ts); this file only resolves the session and dispatches.
import type { MappingConfig } from './config.js';
import { gatedText } from './content.js';
import type { HookInput } from './hook-input.js';
import { ELICITATION_HOOKS } from './mapping/elicitation.js';
import { NOTIFICATION_HOOKS } from './mapping/notification.js';
import { PERMISSION_HOOKS } from './mapping/permission.js';
import { SESSION_HOOKS } from './mapping/session.js';
import type { HookContext, HookMapping, SessionState } from './mapping/state.js';
import { MapperState, safeId, str } from './mapping/state.js';
import { TOOL_HOOKS } from './mapping/tools.js';
import type { DismissRule, EventDraft, MapResult } from './mapping/types.js';

export type { EventDraft, AttentionSpec, AttentionHookKind, DismissRule, MapResult } from './mapping/types.js';
export { safeId, structuralPrompt } from './mapping/state.js';

/** Every mapped hook, by `hook_event_name` (SessionStart is handled before dispatch). */
const HOOKS: ReadonlyMap<string, HookMapping> = new Map(
  Object.entries({
    ...SESSION_HOOKS,
    ...TOOL_HOOKS,
    ...PERMISSION_HOOKS,
    ...ELICITATION_HOOKS,
    ...NOTIFICATION_HOOKS,
  }),
);

/** Unknown hooks still resolve their session and close activity-closed informational requests. */
const UNKNOWN: HookMapping = { scope: 'own', closes: 'activity', map: () => undefined };

/**
 * Stateful mapper for one adapter process (state in mapping/state.ts): tracks sessions, runs
 * (= Claude Code turns), open tool calls and informational requests so terminals pair with their
 * starts (AEP-0002 §2 rule 1) and every request it opened is closed (AEP-0002 §7.2).
 * Deterministic given the clock values.
 */
export class ClaudeCodeMapper {
  private readonly state: MapperState;

  constructor(readonly config: MappingConfig) {
    this.state = new MapperState(config);
  }

  /**
   * Tells the mapper whether a controllable (answerable) request is pending in a session, so a
   * Notification about the same dialog does not open a duplicate informational request.
   */
  get pendingProbe(): (session: string) => boolean {
    return this.state.pendingProbe;
  }
  set pendingProbe(probe: (session: string) => boolean) {
    this.state.pendingProbe = probe;
  }

  /** Whether the Claude Code session (its sanitized id, or a child key) is started and not ended. */
  isOpen(key: string): boolean {
    const s = this.state.sessions.get(key);
    return s !== undefined && !s.ended;
  }

  /** The current run of a Claude Code session (sanitized id), if a turn is in progress. */
  currentRun(key: string): string | undefined {
    return this.state.sessions.get(key)?.run?.id;
  }

  /** What steering needs of an AEP session: whether it is open, its current run, its parent. */
  steerable(aepSession: string): { open: boolean; run?: string; parent?: string } | undefined {
    const s = this.state.byAepId(aepSession);
    if (!s) return undefined;
    const v: { open: boolean; run?: string; parent?: string } = { open: !s.ended };
    if (s.run) v.run = s.run.id;
    if (s.parent) v.parent = s.parent;
    return v;
  }

  /**
   * Ends the current run of `aepSession` as cancelled by the control command `commandId`
   * (`run.cancelled{by:"control", reason [redacted]}`, cause = the command, AEP-0004 §6). Empty
   * when no run is in progress.
   */
  cancelRun(aepSession: string, now: number, commandId: string, reason?: string): EventDraft[] {
    const s = this.state.byAepId(aepSession);
    if (!s?.run) return [];
    const out: EventDraft[] = [];
    const extra: Record<string, unknown> = { by: 'control' };
    const r = reason !== undefined ? gatedText(this.config, this.state.cap('run.cancelled'), reason) : undefined;
    if (r !== undefined) extra['reason'] = r;
    this.state.endRun(s, out, now, 'run.cancelled', extra);
    for (const d of out) {
      delete d.causeRef;
      d.cause = commandId;
    }
    return out;
  }

  /** A `progress.status` in `aepSession` cause-linked to a control command (pause / resume outcomes). */
  steeringStatus(aepSession: string, phase: string, commandId: string): EventDraft | undefined {
    const s = this.state.byAepId(aepSession);
    return s ? this.state.draft('progress.status', s, { phase }, { cause: commandId }) : undefined;
  }

  /**
   * Maps one hook. `now` is the wall clock in ms (durations only). Never throws for a parsed
   * {@link HookInput}; unknown hook names map to nothing (`ignored`).
   */
  map(hook: HookInput, now: number): MapResult {
    const m = this.state;
    const out: EventDraft[] = [];
    const dismiss: DismissRule[] = [];
    const name = hook.hook_event_name;
    if (name === 'SessionStart') {
      const id = safeId(hook.session_id);
      const existing = m.sessions.get(id);
      const s = m.ensure(id, now, out, hook, undefined, true);
      if (existing && !existing.ended && hook['source'] === 'compact') m.compacted(s, out, 'auto');
      return { session: s.id, dismiss, events: out };
    }
    const known = HOOKS.get(name);
    const h = known ?? UNKNOWN;
    // Subagent lifecycle hooks belong to the parent session (their agent_id names the child).
    const s: SessionState = h.scope === 'parent' ? m.ensure(safeId(hook.session_id), now, out, hook) : m.sessionOf(hook, now, out);
    // Informational requests are closed by the next sign that the agent moved on (AEP-0002 §7.2).
    if (h.closes !== 'none') m.closeOob(s, out, now, (o) => h.closes === 'all' || o.closeOn === 'activity');
    const toolName = str(hook.tool_name) ?? '';
    const toolUseId = str(hook.tool_use_id);
    const c: HookContext = {
      hook,
      now,
      s,
      out,
      dismiss,
      toolName,
      toolUseId,
      tool: toolUseId ? { name: toolName, call_id: toolUseId } : { name: toolName },
    };
    const attention = h.map(m, c);
    const result: MapResult = { session: s.id, dismiss, events: out };
    if (attention) result.attention = attention;
    if (!known) result.ignored = name;
    return result;
  }
}
