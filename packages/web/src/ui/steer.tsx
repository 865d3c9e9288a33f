// Steering a session (contract C8): Cancel (a run or the session, optional reason), Pause,
// Resume, each offered only when the session's live claimant declares it in `control.accepts`
// (roster snapshot, AEP-0003 §4.1), sent over the inbox's WebSocket, the ack or nack shown.
import { useEffect, useState } from 'preact/hooks';
import { visibleText } from '@aep/protocol';
import type { SendOutcome } from '../control.js';
import { acceptsOf } from '../control.js';
import type { SteerType } from '../steer.js';
import { activeRuns, buildSteer, outcomeOf, STEER_TYPES, steerVerb } from '../steer.js';
import type { WireEvent } from '../store.js';
import type { AnswerContext } from './request.js';

interface SteerState {
  type: SteerType;
  commandId: string;
  outcome?: SendOutcome;
}

/** The person-readable result of a steering command. */
function message(s: SteerState): string {
  const verb = steerVerb(s.type);
  const o = s.outcome;
  if (!o) return `Sending ${verb}…`;
  switch (o.status) {
    case 'accepted':
      return `The agent accepted: it will try to ${verb}.`;
    case 'rejected':
      if (o.reason === 'unsupported') return `This agent cannot ${verb} (it answered unsupported).`;
      return `The agent refused to ${verb} (reason ${o.reason})${o.detail ? `: “${visibleText(o.detail)}”` : ''}.`;
    case 'refused':
      if (o.code === 'unsupported') return `This agent cannot ${verb}: the relay says it does not accept ${s.type}.`;
      return `The relay refused the command (${o.code})${o.detail ? `: ${visibleText(o.detail)}` : ''}. It never reached the agent.`;
    case 'timeout':
      return `No acknowledgement arrived in time: the agent may be offline.`;
    case 'error':
      return `Could not send: ${o.detail}`;
  }
}

function status(s: SteerState): string {
  if (!s.outcome) return 'sending';
  if (s.outcome.status === 'rejected' && s.outcome.reason === 'unsupported') return 'unsupported';
  if (s.outcome.status === 'refused' && s.outcome.code === 'unsupported') return 'unsupported';
  return s.outcome.status;
}

/** The steering controls of one session, or nothing when its agent declares none of them. */
export function SteerPanel(props: { session: string; ctx: AnswerContext }) {
  const { session, ctx } = props;
  const events: readonly WireEvent[] = ctx.store.sessions.get(session)?.events ?? [];
  const runs = activeRuns(events);
  const [scope, setScope] = useState<'run' | 'session'>('run');
  const [run, setRun] = useState('');
  const [reason, setReason] = useState('');
  const [last, setLast] = useState<SteerState | null>(null);
  useEffect(() => {
    void ctx.roster();
  }, [session, last?.outcome]);
  const accepts = ctx.snapshot ? acceptsOf(ctx.snapshot.entries, session) : new Set<string>();
  const offered = STEER_TYPES.filter((t) => accepts.has(t));
  if (offered.length === 0 || !ctx.canAnswer) return null;
  const chosenRun = runs.includes(run) ? run : runs[0];
  const effScope = scope === 'run' && chosenRun !== undefined ? 'run' : 'session';
  const sending = last !== null && !last.outcome;
  const send = (type: SteerType) => {
    const input = type === 'control.cancel' ? ({ scope: effScope, ...(chosenRun !== undefined ? { run: chosenRun } : {}), reason } as const) : {};
    const cmd = buildSteer(type, session, ctx.host, input);
    const state: SteerState = { type, commandId: cmd.id };
    setLast(state);
    void ctx.send(cmd).then((outcome) => setLast({ ...state, outcome }));
  };
  const ackId = last?.outcome && 'ack' in last.outcome ? (last.outcome.ack['id'] as string | undefined) : undefined;
  const result = last ? outcomeOf(events, last.commandId, ackId) : undefined;
  const uid = `steer-${session.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return (
    <section class="steer" aria-labelledby={`${uid}-h`} data-testid="steer" data-session={session}>
      <h3 id={`${uid}-h`}>Steer this session</h3>
      <div class="actions">
        {offered.includes('control.pause') ? (
          <button type="button" disabled={sending} onClick={() => send('control.pause')}>
            Pause session
          </button>
        ) : null}
        {offered.includes('control.resume') ? (
          <button type="button" disabled={sending} onClick={() => send('control.resume')}>
            Resume session
          </button>
        ) : null}
      </div>
      {offered.includes('control.cancel') ? (
        <fieldset class="cancel">
          <legend>Cancel</legend>
          {chosenRun !== undefined ? (
            <div class="choice">
              <input type="radio" id={`${uid}-run`} name={`${uid}-scope`} checked={effScope === 'run'} onChange={() => setScope('run')} />
              <label for={`${uid}-run`}>This run</label>
              {runs.length > 1 ? (
                <select aria-label="Run to cancel" value={chosenRun} onChange={(ev) => setRun(ev.currentTarget.value)}>
                  {runs.map((r) => (
                    <option key={r} value={r}>
                      {visibleText(r)}
                    </option>
                  ))}
                </select>
              ) : (
                <code>{visibleText(chosenRun)}</code>
              )}
            </div>
          ) : null}
          <div class="choice">
            <input type="radio" id={`${uid}-session`} name={`${uid}-scope`} checked={effScope === 'session'} onChange={() => setScope('session')} />
            <label for={`${uid}-session`}>The whole session</label>
          </div>
          <label for={`${uid}-reason`}>
            Reason <span class="hint">(optional, sent to the agent)</span>
          </label>
          <input type="text" id={`${uid}-reason`} value={reason} onInput={(ev) => setReason(ev.currentTarget.value)} />
          <div class="actions">
            <button type="button" class="choice-btn effect-deny" disabled={sending} onClick={() => send('control.cancel')}>
              {effScope === 'run' ? 'Cancel run' : 'Cancel session'}
            </button>
          </div>
        </fieldset>
      ) : null}
      <p role="status" aria-live="polite" class="steer-result" data-steer-status={last ? status(last) : undefined} data-steer-type={last?.type}>
        {last ? message(last) : null}
        {result ? (
          <>
            {' '}
            Outcome: <code data-testid="steer-outcome">{result.type}</code>.
          </>
        ) : null}
      </p>
    </section>
  );
}
