// The detail view of one attention request: provenance, the agent's text (quoted), and the answer
// controls for its kind: a real form for `kind:"form"` (AEP-0006), option buttons for
// permission-style requests, a free-text reply for anything else (AEP-0002 §5.3: consumers that
// cannot render a kind show the prompt and a text reply). `respond_via` without `control` turns
// the card informational (AEP-0008 §2).
import { useEffect, useRef, useState } from 'preact/hooks';
import { FORM_REFUSAL_OPTIONS, visibleText } from '@aep/protocol';
import type { OptionView } from '@aep/protocol';
import type { InboxStore, RequestEntry, FieldSpec, WireEvent } from '../store.js';
import { captureOf } from '../store.js';
import type { FieldDraft, ShownIssue } from '../form.js';
import { buildRespond, carriesFreeText, checkValues, commandCapture, contentWithheld, draftToValues, fieldsOf, rejectionIssues } from '../form.js';
import type { OfflineEntry, RosterSnapshot, SendOutcome } from '../control.js';
import { routeState } from '../control.js';
import type { ApprovalCard } from '../approve.js';
import { approvalCard, COLLAPSE_LINES, whyText, withProof } from '../approve.js';
import { AgentText, Badge, formatTime, kindOf, promptOf, Provenance } from './common.js';
import { AnswerSummary } from './answered.js';
import { SteerPanel } from './steer.js';
import { AlwaysAllow } from './policy.js';
import type { Phase, RequestUi } from './state.js';
import { uiFor, updateUi, watchUi } from './state.js';

type Command = Record<string, unknown> & { id: string; session: string };

/** What a view needs to answer and steer: the sender, the roster, the store, the page's host. */
export interface AnswerContext {
  send: (cmd: Command) => Promise<SendOutcome>;
  /** Ask the relay for a fresh roster snapshot (also updates `snapshot`); null when unavailable. */
  roster: () => Promise<RosterSnapshot | null>;
  /** The last roster snapshot: live claims and offline requests (null until one arrived). */
  snapshot: RosterSnapshot | null;
  store: InboxStore;
  host: string;
  canAnswer: boolean;
}

/** The C4 offline entry of a request, if its asker is gone. */
export function offlineEntry(snap: RosterSnapshot | null, e: WireEvent): OfflineEntry | undefined {
  return snap?.offline.find((o) => o.request === e.id && o.session === (e.session ?? ''));
}

interface Option {
  id: string;
  label: string;
}

export function optionsOf(e: WireEvent): Option[] {
  const raw = e.data?.['options'];
  if (!Array.isArray(raw)) return [];
  const out: Option[] = [];
  for (const o of raw) {
    if (typeof o !== 'object' || o === null) continue;
    const r = o as Record<string, unknown>;
    if (typeof r['id'] === 'string') out.push({ id: r['id'], label: typeof r['label'] === 'string' ? r['label'] : r['id'] });
  }
  return out;
}

/** Whether this request accepts answers over the control bus (AEP-0008 §2). */
export function answerableByControl(e: WireEvent): boolean {
  const rv = e.data?.['respond_via'];
  if (!Array.isArray(rv)) return true; // absent: send-and-settle
  return rv.includes('control');
}

/** Apply a send outcome to the request's UI phase. */
function phaseFrom(o: SendOutcome, commandId: string, fields: readonly FieldSpec[], localIssues: ShownIssue[]): Phase {
  switch (o.status) {
    case 'accepted':
      return { kind: 'accepted', commandId };
    case 'rejected': {
      let issues = rejectionIssues(o.ack, fields);
      // The emitter's nack names the reason (and maybe a detail text); where it carries no
      // per-field issues, the shared check shows which fields break the same rules.
      if (issues.length === 0) issues = localIssues;
      const p: Phase = { kind: 'rejected', commandId, reason: o.reason, issues };
      if (o.detail !== undefined) p.detail = o.detail;
      return p;
    }
    case 'refused': {
      const p: Phase = { kind: 'refused', commandId, code: o.code };
      if (o.detail !== undefined) p.detail = o.detail;
      return p;
    }
    case 'timeout':
      return { kind: 'timeout', commandId };
    case 'error':
      return { kind: 'error', detail: o.detail };
  }
}

function PhaseBox(props: { phase: Phase; entry: RequestEntry }) {
  const { phase, entry } = props;
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (phase.kind === 'rejected' || phase.kind === 'refused' || phase.kind === 'timeout' || phase.kind === 'error') ref.current?.focus();
  }, [phase]);
  let body = null;
  let cls = 'phase';
  switch (phase.kind) {
    case 'idle':
      return <div role="status" aria-live="polite" class="phase-empty" />;
    case 'sending':
      body = 'Sending your answer…';
      break;
    case 'accepted':
      cls += ' ok';
      body = entry.status === 'pending' ? 'Accepted by the agent. Waiting for it to record the answer…' : 'Accepted by the agent.';
      break;
    case 'rejected': {
      cls += ' bad';
      const general = phase.issues.filter((i) => i.field === undefined);
      body = (
        <>
          <strong>Rejected by the agent</strong> (reason <code>{phase.reason}</code>). The request is still open: correct the answer and send it again.
          {phase.detail ? (
            <p class="detail" data-testid="rejection-detail">
              Agent's detail: <q dir="auto">{visibleText(phase.detail)}</q>
            </p>
          ) : null}
          {general.length > 0 ? (
            <ul>
              {general.map((i, n) => (
                <li key={n}>
                  {i.message}
                  {i.rule ? (
                    <>
                      {' '}
                      <code class="rule">{i.rule}</code>
                    </>
                  ) : null}
                </li>
              ))}
            </ul>
          ) : null}
          {phase.issues.some((i) => i.field !== undefined) ? <p>The problems are marked next to the questions above.</p> : null}
        </>
      );
      break;
    }
    case 'refused':
      cls += ' bad';
      body = (
        <>
          <strong>The relay refused the answer</strong> (<code>{phase.code}</code>){phase.detail ? `: ${visibleText(phase.detail)}` : ''}. It never reached the
          agent; you can try again.
        </>
      );
      break;
    case 'timeout':
      cls += ' bad';
      body = 'No acknowledgement arrived in time. The agent may be offline; you can try again.';
      break;
    case 'error':
      cls += ' bad';
      body = <>Could not send: {phase.detail}</>;
      break;
  }
  return (
    <div ref={ref} tabIndex={-1} role="status" aria-live="polite" class={cls} data-phase={phase.kind}>
      {body}
    </div>
  );
}

function FieldIssues(props: { id: string; issues: ShownIssue[] }) {
  if (props.issues.length === 0) return null;
  return (
    <ul class="field-issues" id={`${props.id}-issues`}>
      {props.issues.map((i, n) => (
        <li key={n}>
          {i.message}
          {i.rule ? (
            <>
              {' '}
              <code class="rule">{i.rule}</code>
            </>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function Req(props: { on: boolean | undefined }) {
  return props.on ? (
    <span class="req" aria-hidden="true">
      {' '}
      *
    </span>
  ) : null;
}

/** One field of a form, with its label (or an honest placeholder) and its issues. */
function FieldView(props: {
  f: FieldSpec;
  index: number;
  withheld: boolean;
  draft: FieldDraft;
  disabled: boolean;
  issues: ShownIssue[];
  onChange: (d: FieldDraft) => void;
  uid: string;
}) {
  const { f, index, withheld, draft, disabled, issues, onChange, uid } = props;
  const id = `${uid}-f${index}`;
  const label = withheld ? `Question ${index + 1}` : visibleText(f.label);
  const invalid = issues.length > 0;
  const describedBy = invalid ? `${id}-issues` : undefined;
  const reqText = f.required ? <span class="sr-only"> (required)</span> : null;

  if (f.type === 'select') {
    const choices = f.choices ?? [];
    const multi = f.multi === true;
    const picked = draft.picked ?? [];
    const name = `${id}-choice`;
    return (
      <fieldset class={`field${invalid ? ' invalid' : ''}`} aria-describedby={describedBy} data-field={f.id}>
        <legend>
          {label}
          <Req on={f.required} />
          {reqText}
          {multi ? <span class="hint"> (pick any)</span> : null}
        </legend>
        {choices.map((c, j) => {
          const cid = `${id}-c${j}`;
          const checked = picked.includes(c.id) && !(draft.otherOn && !multi);
          return (
            <div class="choice" key={c.id}>
              <input
                type={multi ? 'checkbox' : 'radio'}
                id={cid}
                name={name}
                value={c.id}
                disabled={disabled}
                checked={checked}
                aria-invalid={invalid || undefined}
                onChange={(ev) => {
                  const on = ev.currentTarget.checked;
                  if (multi) onChange({ ...draft, picked: on ? [...picked.filter((x) => x !== c.id), c.id] : picked.filter((x) => x !== c.id) });
                  else onChange({ ...draft, picked: [c.id], otherOn: false });
                }}
              />
              <label for={cid}>{withheld ? `Choice ${j + 1}` : visibleText(c.label)}</label>
            </div>
          );
        })}
        {f.other ? (
          <div class="choice other">
            <input
              type={multi ? 'checkbox' : 'radio'}
              id={`${id}-other`}
              name={name}
              value=""
              disabled={disabled}
              checked={draft.otherOn === true}
              onChange={(ev) => {
                const on = ev.currentTarget.checked;
                onChange(multi ? { ...draft, otherOn: on } : { ...draft, otherOn: on, picked: [] });
              }}
            />
            <label for={`${id}-other`}>Other…</label>
            <input
              type="text"
              class="other-text"
              id={`${id}-other-text`}
              aria-label={`${label}: other answer`}
              disabled={disabled}
              value={draft.otherText ?? ''}
              placeholder="Type your own answer"
              onInput={(ev) => onChange({ ...draft, otherText: ev.currentTarget.value, otherOn: true, picked: multi ? picked : [] })}
            />
          </div>
        ) : null}
        <FieldIssues id={id} issues={issues} />
      </fieldset>
    );
  }

  if (f.type === 'boolean') {
    return (
      <div class={`field field-bool${invalid ? ' invalid' : ''}`} data-field={f.id}>
        <input
          type="checkbox"
          id={id}
          disabled={disabled}
          checked={draft.checked === true}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          onChange={(ev) => onChange({ ...draft, checked: ev.currentTarget.checked })}
        />
        <label for={id}>
          {label}
          <Req on={f.required} />
          {reqText}
        </label>
        <FieldIssues id={id} issues={issues} />
      </div>
    );
  }

  const isNumber = f.type === 'number';
  const range =
    isNumber && (f.min !== undefined || f.max !== undefined)
      ? `${f.min !== undefined ? `min ${f.min}` : ''}${f.min !== undefined && f.max !== undefined ? ', ' : ''}${f.max !== undefined ? `max ${f.max}` : ''}`
      : null;
  return (
    <div class={`field${invalid ? ' invalid' : ''}`} data-field={f.id}>
      <label for={id}>
        {label}
        <Req on={f.required} />
        {reqText}
        {range ? <span class="hint"> ({range})</span> : null}
      </label>
      {isNumber ? (
        <input
          type="number"
          id={id}
          disabled={disabled}
          value={draft.text ?? ''}
          min={f.min}
          max={f.max}
          step="any"
          inputMode="decimal"
          aria-required={f.required || undefined}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          onInput={(ev) => onChange({ ...draft, text: ev.currentTarget.value })}
        />
      ) : (
        <input
          type="text"
          id={id}
          disabled={disabled}
          value={draft.text ?? ''}
          aria-required={f.required || undefined}
          aria-invalid={invalid || undefined}
          aria-describedby={describedBy}
          onInput={(ev) => onChange({ ...draft, text: ev.currentTarget.value })}
        />
      )}
      <FieldIssues id={id} issues={issues} />
    </div>
  );
}

function useUi(key: string): [RequestUi, (patch: Partial<RequestUi>) => void] {
  const ui = uiFor(key);
  const [, setTick] = useState(0);
  useEffect(() => watchUi(key, () => setTick((n) => n + 1)), [key]);
  return [ui, (patch) => updateUi(key, patch)];
}

async function submit(
  ctx: AnswerContext,
  entry: RequestEntry,
  ui: RequestUi,
  update: (p: Partial<RequestUi>) => void,
  answer: Record<string, unknown>,
  freeText: boolean,
  fields: FieldSpec[],
  localIssues: ShownIssue[],
  decorate: (cmd: Command) => Command = (c) => c,
) {
  // Every submission is a NEW command with a new id: a corrected answer is a new command
  // (AEP-0006 §4), only an unchanged retry reuses an id (the sender does that internally).
  const cmd = decorate(buildRespond(entry.event, answer, commandCapture(answer, freeText), ctx.host));
  update({ phase: { kind: 'sending', commandId: cmd.id }, commands: [...ui.commands, cmd.id] });
  const outcome = await ctx.send(cmd);
  update({ phase: phaseFrom(outcome, cmd.id, fields, localIssues) });
}

/** The inbox's own labels for the two refusals every form accepts (contract C2). */
const REFUSAL_LABEL: Record<string, string> = { decline: 'Decline to answer', cancel: 'Cancel (dismiss unanswered)' };

function FormAnswer(props: { entry: RequestEntry; ctx: AnswerContext; blocked: boolean; informational: boolean }) {
  const { entry, ctx, blocked, informational } = props;
  const [ui, update] = useUi(entry.key);
  const fields = fieldsOf(entry.event);
  const withheld = contentWithheld(entry.event);
  const values = draftToValues(fields, ui.draft);
  const local = checkValues(fields, values);
  const sending = ui.phase.kind === 'sending';
  const disabled = blocked || sending;
  const emitterIssues = ui.phase.kind === 'rejected' ? ui.phase.issues : [];
  const issuesFor = (fid: string): ShownIssue[] => {
    const fromEmitter = emitterIssues.filter((i) => i.field === fid);
    if (fromEmitter.length > 0) return fromEmitter;
    return ui.tried ? local.filter((i) => i.field === fid) : [];
  };
  const uid = `q${entry.order}`;
  // Closed alternatives a form may declare (legacy producers); decline / cancel are offered by
  // the inbox on every form whatever the request lists (C2), with the inbox's own labels.
  const agentOptions = optionsOf(entry.event).filter((o) => !FORM_REFUSAL_OPTIONS.includes(o.id));
  return (
    <form
      class="answer-form"
      noValidate
      aria-label="Answer form"
      onSubmit={(ev) => {
        ev.preventDefault();
        if (disabled) return;
        update({ tried: true });
        // The emitter is the authority (AEP-0006 §4): the local check shows problems at once
        // but never blocks sending, so what the agent decides is always what the person sees.
        void submit(ctx, entry, ui, update, { values }, carriesFreeText(fields, values), fields, local);
      }}
    >
      {fields.map((f, i) => (
        <FieldView
          key={f.id}
          f={f}
          index={i}
          uid={uid}
          withheld={withheld}
          draft={ui.draft[f.id] ?? {}}
          disabled={disabled}
          issues={issuesFor(f.id)}
          onChange={(d) => update({ draft: { ...ui.draft, [f.id]: d } })}
        />
      ))}
      {fields.some((f) => f.required) ? (
        <p class="hint">
          <span class="req" aria-hidden="true">
            *
          </span>{' '}
          required
        </p>
      ) : null}
      {ui.tried && local.length > 0 && ui.phase.kind !== 'rejected' ? (
        <p class="hint warn" data-testid="local-check">
          This browser's check (the same rules the agent applies) found {local.length} problem{local.length === 1 ? '' : 's'}; the agent will decide.
        </p>
      ) : null}
      {informational ? null : (
        <div class="actions">
          <button type="submit" class="primary" disabled={disabled}>
            {sending ? 'Sending…' : 'Submit answer'}
          </button>
          {agentOptions.map((o, j) => (
            <button
              type="button"
              key={o.id}
              class="choice-btn"
              data-testid={`form-option-${o.id}`}
              disabled={disabled}
              onClick={() => {
                void submit(ctx, entry, ui, update, { option: o.id }, false, [], []);
              }}
            >
              {withheld ? `Option ${j + 1}` : visibleText(o.label)}
            </button>
          ))}
          {FORM_REFUSAL_OPTIONS.map((id) => (
            <button
              type="button"
              key={id}
              class="choice-btn refusal"
              data-testid={`form-option-${id}`}
              disabled={disabled}
              onClick={() => {
                void submit(ctx, entry, ui, update, { option: id }, false, [], []);
              }}
            >
              {REFUSAL_LABEL[id] ?? id}
            </button>
          ))}
        </div>
      )}
    </form>
  );
}

/** What a person reads next to each agent-supplied label: the effect of its id (C1). */
const EFFECT_TEXT: Record<OptionView['effect'], string> = { allow: 'effect: allow', deny: 'effect: deny', other: 'effect: other' };
const EFFECT_SENTENCE: Record<OptionView['effect'], string> = {
  allow: 'ALLOWS the action',
  deny: 'DENIES the action',
  other: 'has an effect this inbox does not know',
};

/**
 * The approval text (C1): complete and verbatim, every character through `visibleText`, in a
 * monospace block; beyond COLLAPSE_LINES lines collapsed (clipped, never cut: all of it is in
 * the block) behind "show all N lines".
 */
function ApprovalText(props: { card: ApprovalCard; e: WireEvent; expanded: boolean; onExpand: () => void }) {
  const { card, e, expanded, onExpand } = props;
  const collapsed = card.lines > COLLAPSE_LINES && !expanded;
  const complete = card.view.complete;
  const chars = [...(typeof e.data?.['prompt'] === 'string' ? e.data['prompt'] : '')].length;
  return (
    <figure class={`approval ${complete ? 'complete' : 'incomplete'}`} data-testid="approval" data-complete={complete ? 'true' : 'false'}>
      <figcaption>
        {complete ? (
          <>
            What will run: the complete input, checked against the agent's digest ({card.lines} line{card.lines === 1 ? '' : 's'}, {chars} characters)
          </>
        ) : card.why === 'withheld' ? (
          <>Synthesized from structure: the input itself is withheld</>
        ) : (
          <>Not the complete input</>
        )}
      </figcaption>
      <pre
        class={`approval-text${collapsed ? ' collapsed' : ''}`}
        dir="ltr"
        data-testid="approval-text"
        style={collapsed ? { maxHeight: `calc(${COLLAPSE_LINES} * 1.45em)` } : undefined}
      >
        {card.shown}
      </pre>
      {collapsed ? (
        <button type="button" class="show-all" data-testid="show-all" onClick={onExpand}>
          Show all {card.lines} lines
        </button>
      ) : null}
      {card.rewritten ? (
        <p class="hint" data-testid="invisible-note">
          Invisible, control or direction-changing characters are shown as visible marks (␛, ␉, ⟨U+202E⟩…), never applied.
        </p>
      ) : null}
    </figure>
  );
}

function ChoiceAnswer(props: { entry: RequestEntry; ctx: AnswerContext; blocked: boolean; card: ApprovalCard }) {
  const { entry, ctx, blocked, card } = props;
  const [ui, update] = useUi(entry.key);
  const [confirm, setConfirm] = useState<string | null>(null);
  const e = entry.event;
  const withheld = contentWithheld(e);
  const bare = optionsOf(e).length === 0;
  const disabled = blocked || ui.phase.kind === 'sending';
  const approval = card.view.required;
  // Hidden lines are not seen: a permissive choice waits until the person opened them all.
  const mustExpand = approval && card.lines > COLLAPSE_LINES && !ui.expanded;
  const reasonId = `reason-${entry.order}`;
  const offered = card.options.filter((o) => o.offer);
  const labelOf = (o: OptionView, j: number) => (withheld && !bare ? `Option ${j + 1}` : visibleText(o.label));
  const send = (o: OptionView) => {
    setConfirm(null);
    const answer: Record<string, unknown> = { option: o.id };
    const reason = ui.reason.trim();
    if (reason) answer['text'] = reason;
    void submit(ctx, entry, ui, update, answer, reason !== '', [], [], (cmd) => withProof(cmd, e, card, o.effect));
  };
  const pending = confirm === null ? undefined : card.options.find((o) => o.id === confirm);
  // Keyboard users land on the question the confirmation asks (focus moved to what changed).
  const confirmRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (confirm !== null) confirmRef.current?.focus();
  }, [confirm]);
  return (
    <div class="answer-choice">
      {card.view.flagged ? (
        <p class="note flag" role="alert" data-testid="approval-flagged">
          <strong>Warning: the agent's labels contradict what these buttons do.</strong>{' '}
          {card.options
            .filter((o) => o.contradicts)
            .map((o, j) => (
              <span key={o.id}>
                {j > 0 ? '; ' : ''}“{visibleText(o.label)}” {EFFECT_SENTENCE[o.effect]} (id <code>{o.id}</code>)
              </span>
            ))}
          . Read the effect on each button, not its label; a contradicting button asks again before sending.
        </p>
      ) : null}
      <div class="field">
        <label for={reasonId}>
          Reason <span class="hint">(optional, sent to the agent)</span>
        </label>
        <textarea id={reasonId} rows={2} disabled={disabled} value={ui.reason} onInput={(ev) => update({ reason: ev.currentTarget.value })} />
      </div>
      <div class="actions" role="group" aria-label="Decision">
        {offered.map((o) => {
          const j = card.options.indexOf(o);
          const gated = o.effect !== 'deny' && mustExpand;
          return (
            <button
              type="button"
              key={o.id}
              class={`choice-btn effect-${o.effect}${o.contradicts ? ' contradicts' : ''}`}
              data-option={o.id}
              data-effect={o.effect}
              disabled={disabled || gated}
              onClick={() => (o.contradicts ? setConfirm(o.id) : send(o))}
            >
              <span class="opt-label">{labelOf(o, j)}</span> <span class="effect">{EFFECT_TEXT[o.effect]}</span>
            </button>
          );
        })}
      </div>
      {mustExpand && offered.some((o) => o.effect !== 'deny') ? (
        <p class="hint" data-testid="expand-first">
          Show all {card.lines} lines of the input above before allowing.
        </p>
      ) : null}
      {pending ? (
        <div
          class="note confirm"
          role="alertdialog"
          tabIndex={-1}
          ref={confirmRef}
          aria-labelledby={`confirm-${entry.order}`}
          data-testid="confirm-contradiction"
        >
          <p id={`confirm-${entry.order}`}>
            The agent labelled this button “{labelOf(pending, card.options.indexOf(pending))}”, but its id is <code>{pending.id}</code>: choosing it{' '}
            <strong>{EFFECT_SENTENCE[pending.effect]}</strong>.
          </p>
          <div class="actions">
            <button type="button" class={`choice-btn effect-${pending.effect}`} disabled={disabled} onClick={() => send(pending)}>
              Send {pending.effect === 'other' ? pending.id : pending.effect} anyway
            </button>
            <button type="button" onClick={() => setConfirm(null)}>
              Back
            </button>
          </div>
        </div>
      ) : null}
      {card.why ? (
        <p class="note incomplete" role="note" data-testid="approval-incomplete" data-why={card.why}>
          <strong>Allow is not offered here:</strong> {whyText(card.why, captureOf(e))}. To allow it, answer on the agent's machine.
          {offered.length > 0 ? ' You can deny from here.' : ''}
        </p>
      ) : null}
    </div>
  );
}

function TextAnswer(props: { entry: RequestEntry; ctx: AnswerContext; informational: boolean; blocked: boolean }) {
  const { entry, ctx, informational, blocked } = props;
  const [ui, update] = useUi(entry.key);
  const disabled = blocked || ui.phase.kind === 'sending';
  const id = `reply-${entry.order}`;
  return (
    <form
      class="answer-text"
      onSubmit={(ev) => {
        ev.preventDefault();
        const text = ui.text.trim();
        if (!text || disabled) return;
        void submit(ctx, entry, ui, update, { text }, true, [], []);
      }}
    >
      <div class="field">
        <label for={id}>Your reply</label>
        <textarea id={id} rows={3} disabled={disabled} value={ui.text} onInput={(ev) => update({ text: ev.currentTarget.value })} />
      </div>
      {informational ? null : (
        <div class="actions">
          <button type="submit" class="primary" disabled={disabled}>
            Send reply
          </button>
        </div>
      )}
    </form>
  );
}

/** How the request ended, and who ended it when the command that did it is known. */
function Outcome(props: { entry: RequestEntry; store: InboxStore }) {
  const { entry, store } = props;
  if (entry.status === 'pending' || (entry.status === 'answered' && !entry.terminal)) {
    return entry.status === 'answered' ? (
      <section class="outcome" aria-label="Outcome" data-status="answered">
        <p>
          <Badge kind="st-answered">answered</Badge> Answered {formatTime(entry.answered?.time)}; waiting for the agent to resolve it.
        </p>
      </section>
    ) : null;
  }
  let text = '';
  if (entry.status === 'timeout') text = `Timed out ${formatTime(entry.terminal?.time)}.`;
  else {
    const res = entry.terminal?.data?.['resolution'];
    text = `Resolved${typeof res === 'string' ? ` (${res})` : ''} ${formatTime(entry.terminal?.time)}.`;
  }
  // A dismissal cause-linked to a command (a form's `cancel`, C2) names who sent it.
  const cause = entry.terminal?.cause;
  const cmd = !entry.answered && typeof cause === 'string' ? store.commands.get(cause) : undefined;
  return (
    <section class="outcome" aria-label="Outcome" data-status={entry.status}>
      <p>
        <Badge kind={`st-${entry.status}`}>{entry.status}</Badge> {text}
        {cmd ? (
          <span class="hint" data-testid="ended-by">
            {' '}
            by <span class="mono">{visibleText(cmd.agent ?? 'unknown')}</span> (<span class="mono">{visibleText(cmd.source)}</span>)
          </span>
        ) : null}
      </p>
    </section>
  );
}

/** Full view of one request. */
export function RequestDetail(props: { entry: RequestEntry; ctx: AnswerContext }) {
  const { entry, ctx } = props;
  const e = entry.event;
  const kind = kindOf(e);
  const withheld = contentWithheld(e);
  const fields = kind === 'form' ? fieldsOf(e) : [];
  const informational = !answerableByControl(e);
  const [ui, update] = useUi(entry.key);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    headingRef.current?.focus();
  }, [entry.key]);
  const expires = e.data?.['expires_at'];
  // Is anyone holding this session right now, and is the asker still there (C4)? A snapshot
  // (AEP-0003 §4.1), refreshed when the request view opens and after each outcome; the
  // command-time check stays authoritative.
  useEffect(() => {
    void ctx.roster();
  }, [entry.key, ui.phase.kind]);
  const open = entry.status === 'pending';
  const offline = open ? offlineEntry(ctx.snapshot, e) : undefined;
  const route = ctx.snapshot && open && !offline && !informational ? routeState(ctx.snapshot.entries, e.session ?? '') : null;
  const blocked = informational || !open || !ctx.canAnswer || offline !== undefined;
  const card = approvalCard(e);
  const approval = card.view.required;
  let answer = null;
  if (open) {
    if (kind === 'form' && fields.length > 0) answer = <FormAnswer entry={entry} ctx={ctx} blocked={blocked} informational={informational} />;
    else if (kind === 'permission' || optionsOf(e).length > 0) answer = <ChoiceAnswer entry={entry} ctx={ctx} blocked={blocked} card={card} />;
    else answer = <TextAnswer entry={entry} ctx={ctx} informational={informational} blocked={blocked} />;
  }
  return (
    <article class="detail" aria-labelledby={`h-${entry.order}`} data-request={e.id} data-status={entry.status} data-offline={offline ? 'true' : undefined}>
      <header>
        <h2 id={`h-${entry.order}`} tabIndex={-1} ref={headingRef}>
          <Badge kind={`kind-${kind}`}>{kind}</Badge> request
          {typeof e.subject === 'string' ? (
            <>
              {' '}
              about <code>{visibleText(e.subject)}</code>
            </>
          ) : null}
        </h2>
        <Provenance e={e} />
        {entry.routed.length ? (
          <p class="hint" data-testid="routed">
            Sent to{' '}
            {entry.routed.slice(-5).map((r, i) => (
              <span key={i}>
                {i ? ', ' : ''}
                <span class="mono">{visibleText(String(r.data?.['to'] ?? r.agent ?? '?'))}</span>
                {typeof r.data?.['via'] === 'string' ? ` (${visibleText(r.data['via'])})` : ''} at {formatTime(r.time)}
              </span>
            ))}{' '}
            (attention.routed, as the router states it)
          </p>
        ) : null}
        {typeof expires === 'string' ? (
          <p class="hint" data-expires>
            {Date.parse(expires) <= Date.now() && open ? (
              <>Expired at {formatTime(expires)}: the agent may time it out at any moment.</>
            ) : (
              <>Expires {formatTime(expires)}</>
            )}
          </p>
        ) : null}
      </header>
      {approval ? (
        <ApprovalText card={card} e={e} expanded={ui.expanded} onExpand={() => update({ expanded: true })} />
      ) : (
        <AgentText text={promptOf(e)} synthesized={withheld} />
      )}
      {withheld && !approval ? (
        <p class="note withheld" role="note">
          Content is withheld at capture level <code>metadata</code>: the question and choice labels below are placeholders ("Question 1", "Choice 2"), not the
          agent's words. Answers still reach the agent by their structural ids.
        </p>
      ) : null}
      {informational ? (
        <p class="note" role="note">
          This request is answered elsewhere ({(e.data?.['respond_via'] as string[]).join(', ')}): shown for information only.
        </p>
      ) : null}
      {!ctx.canAnswer && !informational && open ? (
        <p class="note" role="note">
          Read-only: enter the relay token to answer.
        </p>
      ) : null}
      {offline ? (
        <p class="note offline" role="note" data-testid="offline">
          <strong>Agent offline since {offline.since ? formatTime(offline.since) : 'an unknown time'}.</strong> The agent that asked this
          {offline.agent ? (
            <>
              {' '}
              (<span class="mono">{visibleText(offline.agent)}</span>)
            </>
          ) : null}{' '}
          is no longer connected, so no answer can reach it: it cannot be answered from here. It is dismissed if the agent comes back without it, or ends when
          it expires.
        </p>
      ) : null}
      {route && route !== 'live' ? (
        <p class="note" role="note" data-route={route}>
          {route === 'no-route'
            ? 'No agent is connected for this session right now: an answer would be refused (no-route) until it reconnects.'
            : route === 'ambiguous'
              ? 'Several connections claim this session: the relay will refuse answers (ambiguous) until only one does.'
              : 'The connected agent does not accept answers over the bus (control.attention.respond not declared).'}
        </p>
      ) : route === 'live' ? (
        <p class="hint" data-route="live">
          The agent is connected.
        </p>
      ) : null}
      {answer}
      {kind === 'permission' ? <AlwaysAllow entry={entry} ctx={ctx} card={card} blocked={blocked} /> : null}
      <PhaseBox phase={ui.phase} entry={entry} />
      <AnswerSummary entry={entry} store={ctx.store} mine={ui.commands} />
      <Outcome entry={entry} store={ctx.store} />
      {e.session ? <SteerPanel session={e.session} ctx={ctx} /> : null}
    </article>
  );
}
