// Steering a session from the inbox (contract C8, AEP-0004 §5): `control.cancel` (run or
// session, optional reason), `control.pause`, `control.resume`. Pure: the command envelopes and
// which runs of a session are still going. Sent over the same ControlChannel as answers.
import type { WireEvent } from './store.js';
import { commandCapture, senderSource } from './form.js';
import { ulid } from '@aep/protocol';

/** The steering commands the inbox offers. */
export const STEER_TYPES = ['control.cancel', 'control.pause', 'control.resume'] as const;
export type SteerType = (typeof STEER_TYPES)[number];

/** The verb a person reads for each command ("this agent cannot {verb}"). */
export function steerVerb(type: SteerType): string {
  return type === 'control.cancel' ? 'cancel' : type === 'control.pause' ? 'pause' : 'resume';
}

/** What to cancel: one run (envelope `run`) or the whole session. */
export interface SteerInput {
  scope?: 'run' | 'session';
  run?: string;
  reason?: string;
}

/**
 * Build a steering command (AEP-0004 §2: foreign emitter, no `seq`, `session` = target).
 * `reason` is `[redacted]` free text: the command claims `redacted` when the §9.4 pipeline
 * leaves it unchanged, else `full` (same rule as answers, decisions.md "Web inbox").
 */
export function buildSteer(type: SteerType, session: string, host: string, input: SteerInput = {}): Record<string, unknown> & { id: string; session: string } {
  const cmd: Record<string, unknown> & { id: string; session: string } = {
    aep: '0.1',
    id: ulid(),
    type,
    time: new Date().toISOString(),
    source: senderSource(host),
    agent: 'aep-inbox',
    session,
  };
  let data: Record<string, unknown> = {};
  if (type === 'control.cancel') {
    const scope = input.scope === 'run' && input.run ? 'run' : 'session';
    if (scope === 'run' && input.run) cmd['run'] = input.run;
    data = { scope };
    const reason = input.reason?.trim();
    if (reason) data['reason'] = reason;
  }
  const capture = commandCapture(data, typeof data['reason'] === 'string');
  if (capture !== 'metadata') cmd['capture'] = capture;
  cmd['data'] = data;
  return cmd;
}

const RUN_END = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** Runs of a session that started and have not ended, most recent first. */
export function activeRuns(events: readonly WireEvent[]): string[] {
  const open: string[] = [];
  for (const e of events) {
    if (typeof e.run !== 'string') continue;
    if (e.type === 'run.started') {
      if (!open.includes(e.run)) open.push(e.run);
    } else if (RUN_END.has(e.type)) {
      const i = open.indexOf(e.run);
      if (i >= 0) open.splice(i, 1);
    }
  }
  return open.reverse();
}

/** The first event of a session that is the outcome of a command (cause = command id or its ack id, AEP-0004 §6). */
export function outcomeOf(events: readonly WireEvent[], commandId: string, ackId?: string): WireEvent | undefined {
  for (const e of events) {
    if (e.type === 'control.accepted' || e.type === 'control.rejected' || e.id === commandId) continue;
    if (e.cause === commandId || (ackId !== undefined && e.cause === ackId)) return e;
  }
  return undefined;
}
