// The detail view of one attention request: provenance, the agent's text (quoted), and the answer
// controls for its kind: a real form for `kind:"form"` (AEP-0006), option buttons for
// permission-style requests, a free-text reply for anything else (AEP-0002 §5.3: consumers that
// cannot render a kind show the prompt and a text reply). `respond_via` without `control` turns
// the card informational (AEP-0008 §2).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { RequestEntry, FieldSpec, WireEvent } from '../store.js';
import type { FieldDraft, ShownIssue } from '../form.js';
import { buildRespond, carriesFreeText, checkValues, commandCapture, contentWithheld, draftToValues, fieldsOf, rejectionIssues } from '../form.js';
import type { RosterEntry, SendOutcome } from '../control.js';
import { routeState } from '../control.js';
import { AgentText, Badge, formatTime, kindOf, promptOf, Provenance } from './common.js';
import type { Phase, RequestUi } from './state.js';
import { uiFor, updateUi, watchUi } from './state.js';

/** What a view needs to answer: the sender and the page's host (for the command `source`). */
export interface AnswerContext {
  send: (cmd: Record<string, unknown> & { id: string; session: string }) => Promise<SendOutcome>;
  /** Roster snapshot (null when unavailable). */
  roster: () => Promise<RosterEntry[] | null>;
  host: string;
  canAnswer: boolean;
}

interface Option { id: string; label: string }

function optionsOf(e: WireEvent): Option[] {
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
    case 'accepted': return { kind: 'accepted', commandId };
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
    case 'timeout': return { kind: 'timeout', commandId };
    case 'error': return { kind: 'error', detail: o.detail };
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
    case 'idle': return <div role="status" aria-live="polite" class="phase-empty" />;
    case 'sending': body = 'Sending your answer…'; break;
    case 'accepted':
      cls += ' ok';
      body = entry.status === 'pending'
        ? 'Accepted by the agent. Waiting for it to record the answer…'
        : 'Accepted by the agent.';
      break;
    case 'rejected': {
      cls += ' bad';
      const general = phase.issues.filter((i) => i.field === undefined);
      body = (
        <>
          <strong>Rejected by the agent</strong> (reason <code>{phase.reason}</code>). The request is still open: correct the answer and send it again.
          {phase.detail ? <p class="detail">Agent's detail: <q>{phase.detail}</q></p> : null}
          {general.length > 0 ? <ul>{general.map((i, n) => <li key={n}>{i.message}{i.rule ? <> <code class="rule">{i.rule}</code></> : null}</li>)}</ul> : null}
          {phase.issues.some((i) => i.field !== undefined) ? <p>The problems are marked next to the questions above.</p> : null}
        </>
      );
      break;
    }
    case 'refused':
      cls += ' bad';
      body = (<><strong>The relay refused the answer</strong> (<code>{phase.code}</code>){phase.detail ? `: ${phase.detail}` : ''}. It never reached the agent; you can try again.</>);
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
  return <div ref={ref} tabIndex={-1} role="status" aria-live="polite" class={cls} data-phase={phase.kind}>{body}</div>;
}

function FieldIssues(props: { id: string; issues: ShownIssue[] }) {
  if (props.issues.length === 0) return null;
  return (
    <ul class="field-issues" id={`${props.id}-issues`}>
      {props.issues.map((i, n) => <li key={n}>{i.message}{i.rule ? <> <code class="rule">{i.rule}</code></> : null}</li>)}
    </ul>
  );
}

function Req(props: { on: boolean | undefined }) {
  return props.on ? <span class="req" aria-hidden="true"> *</span> : null;
}

/** One field of a form, with its label (or an honest placeholder) and its issues. */
function FieldView(props: { f: FieldSpec; index: number; withheld: boolean; draft: FieldDraft; disabled: boolean; issues: ShownIssue[]; onChange: (d: FieldDraft) => void; uid: string }) {
  const { f, index, withheld, draft, disabled, issues, onChange, uid } = props;
  const id = `${uid}-f${index}`;
  const label = withheld ? `Question ${index + 1}` : f.label;
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
        <legend>{label}<Req on={f.required} />{reqText}{multi ? <span class="hint"> (pick any)</span> : null}</legend>
        {choices.map((c, j) => {
          const cid = `${id}-c${j}`;
          const checked = picked.includes(c.id) && !(draft.otherOn && !multi);
          return (
            <div class="choice" key={c.id}>
              <input
                type={multi ? 'checkbox' : 'radio'} id={cid} name={name} value={c.id} disabled={disabled} checked={checked}
                aria-invalid={invalid || undefined}
                onChange={(ev) => {
                  const on = ev.currentTarget.checked;
                  if (multi) onChange({ ...draft, picked: on ? [...picked.filter((x) => x !== c.id), c.id] : picked.filter((x) => x !== c.id) });
                  else onChange({ ...draft, picked: [c.id], otherOn: false });
                }}
              />
              <label for={cid}>{withheld ? `Choice ${j + 1}` : c.label}</label>
            </div>
          );
        })}
        {f.other ? (
          <div class="choice other">
            <input
              type={multi ? 'checkbox' : 'radio'} id={`${id}-other`} name={name} value="" disabled={disabled} checked={draft.otherOn === true}
              onChange={(ev) => {
                const on = ev.currentTarget.checked;
                onChange(multi ? { ...draft, otherOn: on } : { ...draft, otherOn: on, picked: [] });
              }}
            />
            <label for={`${id}-other`}>Other…</label>
            <input
              type="text" class="other-text" id={`${id}-other-text`} aria-label={`${label}: other answer`} disabled={disabled}
              value={draft.otherText ?? ''} placeholder="Type your own answer"
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
        <input type="checkbox" id={id} disabled={disabled} checked={draft.checked === true} aria-invalid={invalid || undefined} aria-describedby={describedBy}
          onChange={(ev) => onChange({ ...draft, checked: ev.currentTarget.checked })} />
        <label for={id}>{label}<Req on={f.required} />{reqText}</label>
        <FieldIssues id={id} issues={issues} />
      </div>
    );
  }

  const isNumber = f.type === 'number';
  const range = isNumber && (f.min !== undefined || f.max !== undefined)
    ? `${f.min !== undefined ? `min ${f.min}` : ''}${f.min !== undefined && f.max !== undefined ? ', ' : ''}${f.max !== undefined ? `max ${f.max}` : ''}`
    : null;
  return (
    <div class={`field${invalid ? ' invalid' : ''}`} data-field={f.id}>
      <label for={id}>{label}<Req on={f.required} />{reqText}{range ? <span class="hint"> ({range})</span> : null}</label>
      {isNumber ? (
        <input
          type="number" id={id} disabled={disabled} value={draft.text ?? ''} min={f.min} max={f.max} step="any" inputMode="decimal"
          aria-required={f.required || undefined} aria-invalid={invalid || undefined} aria-describedby={describedBy}
          onInput={(ev) => onChange({ ...draft, text: ev.currentTarget.value })}
        />
      ) : (
        <input
          type="text" id={id} disabled={disabled} value={draft.text ?? ''}
          aria-required={f.required || undefined} aria-invalid={invalid || undefined} aria-describedby={describedBy}
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

async function submit(ctx: AnswerContext, entry: RequestEntry, ui: RequestUi, update: (p: Partial<RequestUi>) => void, answer: Record<string, unknown>, freeText: boolean, fields: FieldSpec[], localIssues: ShownIssue[]) {
  // Every submission is a NEW command with a new id: a corrected answer is a new command
  // (AEP-0006 §4), only an unchanged retry reuses an id (the sender does that internally).
  const cmd = buildRespond(entry.event, answer, commandCapture(answer, freeText), ctx.host);
  update({ phase: { kind: 'sending', commandId: cmd.id }, commands: [...ui.commands, cmd.id] });
  const outcome = await ctx.send(cmd);
  update({ phase: phaseFrom(outcome, cmd.id, fields, localIssues) });
}

function FormAnswer(props: { entry: RequestEntry; ctx: AnswerContext; informational: boolean }) {
  const { entry, ctx, informational } = props;
  const [ui, update] = useUi(entry.key);
  const fields = fieldsOf(entry.event);
  const withheld = contentWithheld(entry.event);
  const values = draftToValues(fields, ui.draft);
  const local = checkValues(fields, values);
  const sending = ui.phase.kind === 'sending';
  const disabled = informational || sending || entry.status !== 'pending' || !ctx.canAnswer;
  const emitterIssues = ui.phase.kind === 'rejected' ? ui.phase.issues : [];
  const issuesFor = (fid: string): ShownIssue[] => {
    const fromEmitter = emitterIssues.filter((i) => i.field === fid);
    if (fromEmitter.length > 0) return fromEmitter;
    return ui.tried ? local.filter((i) => i.field === fid) : [];
  };
  const uid = `q${entry.order}`;
  const formOptions = optionsOf(entry.event);
  return (
    <form
      class="answer-form" noValidate
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
        <FieldView key={f.id} f={f} index={i} uid={uid} withheld={withheld} draft={ui.draft[f.id] ?? {}} disabled={disabled} issues={issuesFor(f.id)}
          onChange={(d) => update({ draft: { ...ui.draft, [f.id]: d } })} />
      ))}
      {fields.some((f) => f.required) ? <p class="hint"><span class="req" aria-hidden="true">*</span> required</p> : null}
      {ui.tried && local.length > 0 && ui.phase.kind !== 'rejected' ? (
        <p class="hint warn" data-testid="local-check">This browser's check (the same rules the agent applies) found {local.length} problem{local.length === 1 ? '' : 's'}; the agent will decide.</p>
      ) : null}
      {informational ? null : (
        <div class="actions">
          <button type="submit" class="primary" disabled={disabled}>{sending ? 'Sending…' : 'Submit answer'}</button>
          {/* A form may also declare closed `options` (e.g. decline / cancel for an MCP elicitation,
              skip / deny for AskUserQuestion): each answers the whole request with `answer.option`. */}
          {formOptions.map((o, j) => (
            <button type="button" key={o.id} class="choice-btn" data-testid={`form-option-${o.id}`} disabled={disabled}
              onClick={() => { void submit(ctx, entry, ui, update, { option: o.id }, false, [], []); }}>
              {withheld ? `Option ${j + 1}` : o.label}
            </button>
          ))}
        </div>
      )}
    </form>
  );
}

function ChoiceAnswer(props: { entry: RequestEntry; ctx: AnswerContext; informational: boolean }) {
  const { entry, ctx, informational } = props;
  const [ui, update] = useUi(entry.key);
  const kind = kindOf(entry.event);
  const withheld = contentWithheld(entry.event);
  let options = optionsOf(entry.event);
  const synthesizedOptions = options.length === 0 && kind === 'permission';
  if (synthesizedOptions) options = [{ id: 'allow', label: 'Allow' }, { id: 'deny', label: 'Deny' }];
  const disabled = informational || ui.phase.kind === 'sending' || entry.status !== 'pending' || !ctx.canAnswer;
  const reasonId = `reason-${entry.order}`;
  const send = (optionId: string) => {
    const answer: Record<string, unknown> = { option: optionId };
    const reason = ui.reason.trim();
    if (reason) answer['text'] = reason;
    void submit(ctx, entry, ui, update, answer, reason !== '', [], []);
  };
  return (
    <div class="answer-choice">
      <div class="field">
        <label for={reasonId}>Reason <span class="hint">(optional, sent to the agent)</span></label>
        <textarea id={reasonId} rows={2} disabled={disabled} value={ui.reason} onInput={(ev) => update({ reason: ev.currentTarget.value })} />
      </div>
      <div class="actions" role="group" aria-label="Decision">
        {options.map((o, j) => {
          const tone = /^(allow|yes|approve|accept|ok)/i.test(o.id) ? 'allow' : /^(deny|no|reject|refuse|block)/i.test(o.id) ? 'deny' : '';
          return (
            <button type="button" key={o.id} class={`choice-btn ${tone}`} disabled={disabled} onClick={() => send(o.id)}>
              {withheld && !synthesizedOptions ? `Option ${j + 1}` : o.label}
            </button>
          );
        })}
      </div>
    </div>
  );
}

function TextAnswer(props: { entry: RequestEntry; ctx: AnswerContext; informational: boolean }) {
  const { entry, ctx, informational } = props;
  const [ui, update] = useUi(entry.key);
  const disabled = informational || ui.phase.kind === 'sending' || entry.status !== 'pending' || !ctx.canAnswer;
  const id = `reply-${entry.order}`;
  return (
    <form class="answer-text" onSubmit={(ev) => {
      ev.preventDefault();
      const text = ui.text.trim();
      if (!text || disabled) return;
      void submit(ctx, entry, ui, update, { text }, true, [], []);
    }}>
      <div class="field">
        <label for={id}>Your reply</label>
        <textarea id={id} rows={3} disabled={disabled} value={ui.text} onInput={(ev) => update({ text: ev.currentTarget.value })} />
      </div>
      {informational ? null : <div class="actions"><button type="submit" class="primary" disabled={disabled}>Send reply</button></div>}
    </form>
  );
}

function Outcome(props: { entry: RequestEntry }) {
  const { entry } = props;
  if (entry.status === 'pending') return null;
  const ans = entry.answered?.data?.['answer'];
  const via = entry.answered?.data?.['via'];
  let text = '';
  if (entry.status === 'timeout') text = `Timed out ${formatTime(entry.terminal?.time)}.`;
  else if (entry.status === 'resolved') {
    const res = entry.terminal?.data?.['resolution'];
    text = `Resolved${typeof res === 'string' ? ` (${res})` : ''} ${formatTime(entry.terminal?.time)}.`;
  } else text = `Answered ${formatTime(entry.answered?.time)}; waiting for the agent to resolve it.`;
  return (
    <section class="outcome" aria-label="Outcome" data-status={entry.status}>
      <p><Badge kind={`st-${entry.status}`}>{entry.status}</Badge> {text} {typeof via === 'string' ? <span class="hint">via {via}</span> : null}</p>
      {ans !== undefined ? (
        <details>
          <summary>Answer the agent recorded</summary>
          <pre class="mono">{JSON.stringify(ans, null, 2)}</pre>
        </details>
      ) : null}
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
  const [ui] = useUi(entry.key);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => { headingRef.current?.focus(); }, [entry.key]);
  const expires = e.data?.['expires_at'];
  // Is anyone holding this session right now? A snapshot (AEP-0003 §4.1), refreshed when the
  // request view opens and after each outcome; the command-time check stays authoritative.
  const [route, setRoute] = useState<ReturnType<typeof routeState> | null>(null);
  useEffect(() => {
    if (!ctx.canAnswer || informational || entry.status !== 'pending') return;
    let live = true;
    void ctx.roster().then((r) => { if (live && r) setRoute(routeState(r, e.session ?? '')); });
    return () => { live = false; };
  }, [entry.key, ui.phase.kind]);
  let answer;
  if (kind === 'form' && fields.length > 0) answer = <FormAnswer entry={entry} ctx={ctx} informational={informational} />;
  else if (kind === 'permission' || optionsOf(e).length > 0) answer = <ChoiceAnswer entry={entry} ctx={ctx} informational={informational} />;
  else answer = <TextAnswer entry={entry} ctx={ctx} informational={informational} />;
  return (
    <article class="detail" aria-labelledby={`h-${entry.order}`} data-request={e.id} data-status={entry.status}>
      <header>
        <h2 id={`h-${entry.order}`} tabIndex={-1} ref={headingRef}>
          <Badge kind={`kind-${kind}`}>{kind}</Badge> request{typeof e.subject === 'string' ? <> about <code>{e.subject}</code></> : null}
        </h2>
        <Provenance e={e} />
        {typeof expires === 'string' ? (
          <p class="hint" data-expires>
            {Date.parse(expires) <= Date.now() && entry.status === 'pending'
              ? <>Expired at {formatTime(expires)}: the agent may time it out at any moment.</>
              : <>Expires {formatTime(expires)}</>}
          </p>
        ) : null}
      </header>
      <AgentText text={promptOf(e)} synthesized={withheld} />
      {withheld ? (
        <p class="note withheld" role="note">
          Content is withheld at capture level <code>metadata</code>: the question and choice labels below are placeholders
          ("Question 1", "Choice 2"), not the agent's words. Answers still reach the agent by their structural ids.
        </p>
      ) : null}
      {informational ? (
        <p class="note" role="note">This request is answered elsewhere ({(e.data?.['respond_via'] as string[]).join(', ')}): shown for information only.</p>
      ) : null}
      {!ctx.canAnswer && !informational ? <p class="note" role="note">Read-only: enter the relay token to answer.</p> : null}
      {route && route !== 'live' && entry.status === 'pending' ? (
        <p class="note" role="note" data-route={route}>
          {route === 'no-route' ? 'No agent is connected for this session right now: an answer would be refused (no-route) until it reconnects.'
            : route === 'ambiguous' ? 'Several connections claim this session: the relay will refuse answers (ambiguous) until only one does.'
              : 'The connected agent does not accept answers over the bus (control.attention.respond not declared).'}
        </p>
      ) : route === 'live' && entry.status === 'pending' ? <p class="hint" data-route="live">The agent is connected.</p> : null}
      {answer}
      <PhaseBox phase={ui.phase} entry={entry} />
      <Outcome entry={entry} />
    </article>
  );
}
