// Steering a Claude Code session from any surface (issue 14 item 4, contract C8; AEP-0004 §5):
// what the daemon can honour within hook budgets, and nothing more (AEP-0004 §4.2: undeclared
// commands are nacked `unsupported`).
//
// - `control.cancel {scope:"run"|"session", reason?}`: the current turn ends (`run.cancelled
//   {by:"control"}`, cause = the command); every tool call of the session (and its subagents)
//   is denied with the person's reason until the person starts a new turn in Claude Code
//   (UserPromptSubmit): PreToolUse -> `permissionDecision:"deny"`, PermissionRequest -> deny with
//   `interrupt:true`, Elicitation -> `cancel`; held questions are dismissed and their hooks get
//   the same denial.
// - `control.pause {}`: the next tool calls of the session are held at PreToolUse (the agent
//   waits) until `control.resume`, a cancel, or the hook's budget (`--wait-ms`), then Claude Code
//   proceeds as it would have (a pause cannot outlast the hook timeout).
// - `control.resume {}`: releases the held tool calls.
// Pure state and translation; the daemon does the I/O.
import type { Issue } from '@aep/protocol';

/** The command types the daemon honours (its `control.accepts`). */
export const STEERING_COMMANDS = ['control.cancel', 'control.pause', 'control.resume'] as const;

/** A checked `control.cancel`. */
export interface CancelCommand {
  scope: 'run' | 'session';
  /** The envelope `run` (required for scope `run`). */
  run?: string;
  /** The person's reason, as given (free text; `[redacted]` on the wire). */
  reason?: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks a `control.cancel` envelope (AEP-0004 §5); issues nack `invalid`. */
export function parseCancel(cmd: Record<string, unknown>): CancelCommand | Issue[] {
  const data = isObject(cmd['data']) ? cmd['data'] : {};
  const scope = data['scope'];
  if (scope !== 'run' && scope !== 'session') {
    return [{ rule: 'control.cancel.scope', path: '/data/scope', message: 'control.cancel needs data.scope "run" or "session"', section: 'AEP-0004 §5' }];
  }
  const reason = data['reason'];
  if (reason !== undefined && typeof reason !== 'string') {
    return [{ rule: 'control.cancel.reason', path: '/data/reason', message: 'data.reason must be a string when present', section: 'AEP-0004 §5' }];
  }
  const run = typeof cmd['run'] === 'string' ? cmd['run'] : undefined;
  if (scope === 'run' && run === undefined) {
    return [{ rule: 'control.cancel.run', path: '/run', message: 'a run-scoped cancel names its run in the envelope', section: 'AEP-0004 §5' }];
  }
  const out: CancelCommand = { scope };
  if (run !== undefined) out.run = run;
  if (typeof reason === 'string' && reason.trim() !== '') out.reason = reason;
  return out;
}

/** What Claude reads when a tool call is denied by a cancel. */
export function cancelReason(reason: string | undefined, by: string): string {
  return reason ?? `Cancelled by the user from ${by} (AEP control.cancel): stop and wait for the user.`;
}

/** The hook output that refuses a tool call (or an elicitation) of a cancelled session. */
export function cancelOutput(hookEventName: string, reason: string): Record<string, unknown> {
  switch (hookEventName) {
    case 'PermissionRequest':
      return { hookSpecificOutput: { hookEventName, decision: { behavior: 'deny', message: reason, interrupt: true } } };
    case 'Elicitation':
      return { hookSpecificOutput: { hookEventName, action: 'cancel' } };
    default:
      return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } };
  }
}

/** Hooks a cancel refuses (a tool is about to run, or an MCP server asks). */
export const CANCELLED_HOOKS: ReadonlySet<string> = new Set(['PreToolUse', 'PermissionRequest', 'Elicitation']);

/** How a hook held by a pause ended. */
export type PauseEnd = 'resumed' | 'cancelled' | 'timeout' | 'abandoned';

/** Steering state of the daemon's sessions (AEP session ids). */
export class Steering {
  private readonly cancelled = new Map<string, string>();
  private readonly paused = new Map<string, Set<(end: PauseEnd) => void>>();
  private waiting = 0;

  /** Deny the tool calls of `session` with `reason` until {@link disarm}. */
  arm(session: string, reason: string): void {
    this.cancelled.set(session, reason);
    // A cancel supersedes a pause: the held tool calls are denied, nothing stays paused.
    this.release(session, 'cancelled');
    this.paused.delete(session);
  }

  /** The person started a new turn (or the session ended): tools run again. */
  disarm(session: string): void {
    this.cancelled.delete(session);
  }

  /** The denial reason when `session` (or a session it belongs to) is cancelled. */
  cancelledReason(...sessions: (string | undefined)[]): string | undefined {
    for (const s of sessions) if (s !== undefined && this.cancelled.has(s)) return this.cancelled.get(s);
    return undefined;
  }

  pause(session: string): void {
    if (!this.paused.has(session)) this.paused.set(session, new Set());
  }

  isPaused(...sessions: (string | undefined)[]): string | undefined {
    for (const s of sessions) if (s !== undefined && this.paused.has(s)) return s;
    return undefined;
  }

  /** Resumes `session`; false when it was not paused. */
  resume(session: string): boolean {
    if (!this.paused.has(session)) return false;
    this.release(session, 'resumed');
    this.paused.delete(session);
    return true;
  }

  /** Hooks currently held by a pause. */
  heldCount(): number {
    return this.waiting;
  }

  /**
   * Holds a hook of the paused `session` until resume, cancel, `ms`, or `abandon` (Claude Code
   * gave up on the hook).
   */
  wait(session: string, ms: number, onAbandon: (cb: () => void) => void): Promise<PauseEnd> {
    const set = this.paused.get(session);
    if (!set) return Promise.resolve('resumed');
    this.waiting++;
    return new Promise<PauseEnd>((resolve) => {
      const done = (end: PauseEnd): void => {
        if (!set.delete(done)) return;
        clearTimeout(t);
        this.waiting--;
        resolve(end);
      };
      const t = setTimeout(() => done('timeout'), Math.max(0, ms));
      set.add(done);
      onAbandon(() => done('abandoned'));
    });
  }

  /** Forgets a session that ended (its held hooks proceed). */
  forget(session: string): void {
    this.cancelled.delete(session);
    this.release(session, 'resumed');
    this.paused.delete(session);
  }

  private release(session: string, end: PauseEnd): void {
    const set = this.paused.get(session);
    if (set) for (const w of [...set]) w(end);
  }
}
