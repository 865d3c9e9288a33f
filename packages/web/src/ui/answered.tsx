// The answer an emitter recorded (`attention.answered`), shown as far as this viewer's capture
// shows it, with who answered and through which channel (issue 14 item 3). The answer is the
// emitter's validated record (AEP-0002 §8), not what some responder typed; who answered is what
// the sender states (AEP-0004 §8: asserted, not proven), and is labelled so.
import { captureRank, optionEffect, visibleText } from '@aep/protocol';
import type { FieldSpec, InboxStore, RequestEntry, WireEvent } from '../store.js';
import { captureOf } from '../store.js';
import { contentWithheld, fieldsOf } from '../form.js';
import { formatTime } from './common.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A field value as a person reads it: choice ids become their labels, text stays quoted. */
function valueText(f: FieldSpec, v: unknown, withheldLabels: boolean): string {
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'number') return String(v);
  const choice = (x: unknown): string => {
    const i = f.choices?.findIndex((c) => c.id === x) ?? -1;
    if (i >= 0) return withheldLabels ? `Choice ${i + 1}` : visibleText(f.choices?.[i]?.label ?? String(x));
    return typeof x === 'string' ? `Other: “${visibleText(x)}”` : visibleText(JSON.stringify(x) ?? '');
  };
  if (f.type === 'select') return Array.isArray(v) ? v.map(choice).join(', ') : choice(v);
  return typeof v === 'string' ? `“${visibleText(v)}”` : visibleText(JSON.stringify(v) ?? '');
}

/** Who answered, in the inbox's own words. */
function who(a: WireEvent, cmd: WireEvent | undefined, mine: boolean): string {
  const d = a.data ?? {};
  const by = typeof d['by'] === 'string' ? visibleText(d['by']) : undefined;
  const via = typeof d['via'] === 'string' ? d['via'] : undefined;
  const at = formatTime(a.time);
  if (via === 'oob') return `Answered in the agent's own interface (out of band)${by ? `, by ${by}` : ''}, ${at}.`;
  const sender = by ?? (cmd?.agent !== undefined ? visibleText(cmd.agent) : undefined);
  const from = cmd ? `, sent from ${visibleText(cmd.source)}` : '';
  const channel = via === 'control' ? 'via control (a command through the relay)' : 'on a channel the agent did not name';
  return `Answered by ${sender ?? 'an unnamed responder'} ${channel}${from}, ${at}${mine ? ' — from this browser tab' : ''}. (The sender's identity is as it states it.)`;
}

/** The recorded answer of a request, if it has one. */
export function AnswerSummary(props: { entry: RequestEntry; store: InboxStore; mine: readonly string[] }) {
  const { entry, store, mine } = props;
  const a = entry.answered;
  if (!a) return null;
  const answer = isObject(a.data?.['answer']) ? a.data['answer'] : undefined;
  const cause = typeof a.cause === 'string' ? a.cause : undefined;
  const cmd = cause !== undefined ? store.commands.get(cause) : undefined;
  const cap = captureOf(a);
  const textShown = captureRank(cap) >= captureRank('redacted');
  const e = entry.event;
  const withheldLabels = contentWithheld(e);
  const rows: { label: string; value: string; withheld: boolean }[] = [];
  let body = null;
  if (answer && isObject(answer['values'])) {
    const values = answer['values'];
    fieldsOf(e).forEach((f, i) => {
      const label = withheldLabels ? `Question ${i + 1}` : visibleText(f.label);
      if (Object.prototype.hasOwnProperty.call(values, f.id)) rows.push({ label, value: valueText(f, values[f.id], withheldLabels), withheld: false });
      else if (!textShown && (f.type === 'string' || (f.type === 'select' && f.other === true)))
        rows.push({ label, value: `not shown at capture level ${cap}`, withheld: true });
      else rows.push({ label, value: 'not answered', withheld: false });
    });
    body = (
      <dl class="answer-values">
        {rows.map((r, i) => (
          <div key={i} data-answer-row={i}>
            <dt>{r.label}</dt>
            <dd class={r.withheld ? 'hint' : undefined}>{r.value}</dd>
          </div>
        ))}
      </dl>
    );
  }
  const option = answer && typeof answer['option'] === 'string' ? answer['option'] : undefined;
  const text = answer && typeof answer['text'] === 'string' ? answer['text'] : undefined;
  let optionLine = null;
  if (option !== undefined) {
    const opts = Array.isArray(e.data?.['options']) ? (e.data['options'] as unknown[]).filter(isObject) : [];
    const o = opts.find((x) => x['id'] === option);
    const label =
      option === 'decline' && !o
        ? 'Declined'
        : option === 'cancel' && !o
          ? 'Cancelled'
          : o && typeof o['label'] === 'string' && !withheldLabels
            ? visibleText(o['label'])
            : visibleText(option);
    optionLine = (
      <p data-testid="answer-option">
        Chose <strong>{label}</strong> (id <code>{visibleText(option)}</code>, effect: {optionEffect(option)})
      </p>
    );
  }
  return (
    <section class="answered" aria-label="The recorded answer" data-testid="answer-summary">
      <h3>Answer the agent recorded</h3>
      <p data-testid="answered-by">{who(a, cmd, cause !== undefined && mine.includes(cause))}</p>
      {optionLine}
      {body}
      {text !== undefined ? (
        <p data-testid="answer-text">
          Text: <q dir="auto">{visibleText(text)}</q>
        </p>
      ) : null}
      {!textShown ? (
        <p class="hint">
          Free text in the answer (if any) is not shown at capture level <code>{cap}</code>.
        </p>
      ) : null}
      {!answer ? (
        <p class="hint">
          The answer itself is not shown at capture level <code>{cap}</code>.
        </p>
      ) : null}
    </section>
  );
}
