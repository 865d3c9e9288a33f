// Terminal rendering of agent-authored text and of attention requests (docs/security.md §5 "What a
// person approving sees"). Every character an agent wrote goes through `visibleText`: control,
// bidi and zero-width characters become visible stand-ins, never interpreted; nothing is cut or
// folded. Loaded lazily by the commands that print (it imports @aep/protocol).
import { approvalView, captureRank, isCaptureLevel, optionEffect, visibleText, type ApprovalView, type OfflineRequest, type OptionView } from '@aep/protocol';
import type { FieldSpec, WireEvent } from '@aep/client';

/** One-line rendering of untrusted text (names, labels, ids): invisible characters and newlines made visible. */
export function oneLine(text: unknown): string {
  return visibleText(String(text)).replace(/\n/g, '\u240a');
}

/** Multi-line rendering of untrusted text: every line kept, each behind `prefix`. */
export function block(text: string, prefix = '  │ '): string[] {
  return visibleText(text)
    .split('\n')
    .map((l) => prefix + l);
}

/** Lines and characters of a text, for "complete: N lines, M characters". */
export function measure(text: string): string {
  const lines = text.split('\n').length;
  const chars = [...text].length;
  return `${lines} line${lines === 1 ? '' : 's'}, ${chars} character${chars === 1 ? '' : 's'}`;
}

/** What an option does, in words. */
export function effectWord(effect: OptionView['effect']): string {
  return effect === 'allow' ? 'ALLOWS' : effect === 'deny' ? 'denies' : 'other';
}

/** Why the approval text is not complete here (shown next to "Allow is not offered"). */
export function incompleteReason(event: WireEvent, view: ApprovalView): string {
  if (view.digest === undefined) return 'the request carries no approvaldigest, so no surface can tell it is complete';
  const capture = event.capture ?? 'metadata';
  if (capture === 'metadata' || capture === 'none') return `it reached this terminal at capture ${capture}, where the input is replaced by a summary`;
  if (typeof event.data?.['prompt'] !== 'string') return 'the request carries no prompt';
  return `the copy that reached this terminal (capture ${oneLine(capture)}) differs from the original (redaction changed it, or it was cut)`;
}

/** An attention request as the commands see it (a `PendingAttention`, or a replayed event). */
export interface RequestLike {
  id: string;
  session: string;
  agent: string;
  time: string;
  capture: string;
  data: Record<string, unknown>;
  event: WireEvent;
  answered?: boolean;
  /** The request's `attention.answered`, once recorded (listPending entries carry it). */
  answeredEvent?: WireEvent;
}

/** The request viewed from an event as received (`listPending` entries carry theirs). */
export function requestFromEvent(e: WireEvent): RequestLike {
  const data = e.data !== null && typeof e.data === 'object' && !Array.isArray(e.data) ? e.data : {};
  return { id: e.id, session: String(e.session ?? ''), agent: e.agent, time: e.time, capture: e.capture ?? 'metadata', data, event: e };
}

function ago(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return 'just now';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ago`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h}h ago` : `${Math.floor(h / 24)}d ago`;
}

function fieldsOf(data: Record<string, unknown>): FieldSpec[] | undefined {
  return Array.isArray(data['fields']) ? (data['fields'] as FieldSpec[]) : undefined;
}

/** One line per form field: id, required mark, type, label, range/choices. */
export function fieldLines(fields: readonly FieldSpec[], indent = '    '): string[] {
  return fields.map((f) => {
    const range = f.type === 'number' && (f.min !== undefined || f.max !== undefined) ? ` ${f.min ?? '…'}–${f.max ?? '…'}` : '';
    const choices =
      f.type === 'select' && Array.isArray(f.choices)
        ? `: ${f.choices.map((c) => `${oneLine(c.id)} "${oneLine(c.label)}"`).join(', ')}${f.other ? ', or other text' : ''}`
        : '';
    return `${indent}${oneLine(f.id)} ${f.required ? '*' : ' '} ${f.type}${f.type === 'select' && f.multi ? ' multi' : ''}  "${oneLine(f.label)}"${range}${choices}`;
  });
}

/** One line per option: id, label, effect; the warning when the label contradicts the id. */
export function optionLines(view: ApprovalView, indent = '    '): string[] {
  const width = Math.min(24, Math.max(...view.options.map((o) => oneLine(o.id).length)));
  return view.options.map((o) => {
    const warn = o.contradicts
      ? `  ⚠ the label says "${oneLine(o.label)}" but choosing it ${o.effect === 'allow' ? 'ALLOWS' : o.effect === 'deny' ? 'DENIES' : 'does something else'}`
      : '';
    const offer = o.offer ? '' : '  (not offered here: the complete input is not shown)';
    return `${indent}[${oneLine(o.id).padEnd(width)}] "${oneLine(o.label)}" → ${effectWord(o.effect)}${warn}${offer}`;
  });
}

export interface RenderOptions {
  /** The `aep` prefix of hints (selfCommand()). */
  aep: string;
  /** Print how to answer. */
  hints: boolean;
  /** Print every form field (respond --show, answer); the inbox prints the count. */
  fields: boolean;
  now?: number;
  /** The relay lists the request as offline (contract C4): shown, and no answer hints. */
  offline?: OfflineRequest;
  /** The command that carried the recorded answer (who sent it, from where). */
  command?: WireEvent;
}

/**
 * Human rendering of one request: provenance (trusted structure), then the agent-authored text
 * complete and verbatim. For a permission request: the approval text with its digest when it is
 * complete (Allow can be offered), else a warning that Allow is not offered here; every option
 * with its effect; a warning when a label contradicts its id.
 */
export function renderRequest(p: RequestLike, o: RenderOptions): string {
  const data = p.data;
  const kind = typeof data['kind'] === 'string' ? data['kind'] : '?';
  const view = approvalView(p.event);
  const fields = fieldsOf(data);
  const subject = typeof p.event.subject === 'string' ? ` · ${oneLine(p.event.subject)}` : '';
  const lines = [
    `● ${oneLine(p.id)}  ${oneLine(kind)}${subject}${fields ? ` · ${fields.length} field${fields.length === 1 ? '' : 's'}` : ''}${p.answered ? ' · answered, not yet resolved' : ''}`,
    `  from ${oneLine(p.agent)} · session ${oneLine(p.session)} · ${ago((o.now ?? Date.now()) - Date.parse(p.time))} · capture ${oneLine(p.capture)}`,
  ];
  const prompt = typeof data['prompt'] === 'string' ? data['prompt'] : undefined;
  if (view.required) {
    if (view.complete && view.text !== undefined) {
      lines.push(`  What will run, complete and verbatim (${measure(view.text)}; invisible characters shown as ␛, ␉, ⟨U+202E⟩…):`);
      lines.push(...block(view.text));
      lines.push(`  approval digest: ${view.digest ?? ''}`);
    } else {
      lines.push(`  ⚠ The complete input does not reach this terminal: ${incompleteReason(p.event, view)}.`);
      lines.push(`    Allow is not offered here: deny, or answer on the agent's machine. What the relay delivered:`);
      if (prompt !== undefined) lines.push(...block(prompt));
    }
  } else if (prompt !== undefined) {
    lines.push(...block(prompt));
  }
  if (view.options.length > 0) {
    lines.push("  Options (id, the agent's label, what choosing it does):");
    lines.push(...optionLines(view));
    if (view.flagged) lines.push("  ⚠ WARNING: an option's label contradicts what it does. Choose by the effect shown, not by the label.");
  }
  if (fields && o.fields) {
    lines.push('  Fields (* required):');
    lines.push(...fieldLines(fields));
  }
  if (p.answeredEvent) lines.push(...answeredLines(p, p.answeredEvent, o.command));
  if (o.offline) lines.push(offlineLine(o.offline, o.now ?? Date.now()));
  else if (o.hints) lines.push(...answerHints(p, view, o.aep));
  return lines.join('\n');
}

/** "agent offline since …" (contract C4): the request cannot be answered now, and why. */
export function offlineLine(o: OfflineRequest, now: number): string {
  return `  ⚠ agent offline since ${oneLine(o.since)} (${ago(now - Date.parse(o.since))}): the agent that asked (${oneLine(o.agent)}) is no longer connected, so this request cannot be answered now; it is dismissed if the agent comes back without it, or expires`;
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The recorded answer (the emitter's `attention.answered`, AEP-0002 §8), as far as the capture it
 * reached this reader at shows it, then who answered and from where (as the sender states it,
 * AEP-0004 §8: asserted, not proven).
 */
export function answeredLines(p: RequestLike, a: WireEvent, cmd: WireEvent | undefined): string[] {
  const d = isObj(a.data) ? a.data : {};
  const cap = typeof a.capture === 'string' && isCaptureLevel(a.capture) ? a.capture : 'metadata';
  const textShown = captureRank(cap) >= captureRank('redacted');
  const answer = isObj(d['answer']) ? d['answer'] : {};
  const out: string[] = [];
  const by = typeof d['by'] === 'string' ? d['by'] : cmd?.agent;
  const via =
    d['via'] === 'control'
      ? 'via control (a command through the relay)'
      : d['via'] === 'oob'
        ? "in the agent's own interface (out of band)"
        : 'on a channel the agent did not name';
  out.push(
    `  Answered ${oneLine(a.time)} by ${by !== undefined ? oneLine(by) : 'an unnamed responder'} ${via}${cmd ? `, sent from ${oneLine(cmd.source)}` : ''} (the sender's identity is as it states it):`,
  );
  if (typeof answer['option'] === 'string') {
    const opts = Array.isArray(p.data['options']) ? (p.data['options'] as unknown[]).filter(isObj) : [];
    const o = opts.find((x) => x['id'] === answer['option']);
    const label =
      o && typeof o['label'] === 'string'
        ? ` "${oneLine(o['label'])}"`
        : answer['option'] === 'decline'
          ? ' (declined)'
          : answer['option'] === 'cancel'
            ? ' (cancelled)'
            : '';
    out.push(`    option ${oneLine(answer['option'])}${label} → ${effectWord(optionEffect(answer['option']))}`);
  }
  if (typeof answer['text'] === 'string') out.push('    text:', ...block(answer['text'], '    │ '));
  else if (!textShown && answer['values'] === undefined && answer['option'] === undefined) out.push(`    (the answer's text is not shown at capture ${cap})`);
  if (isObj(answer['values'])) {
    const values = answer['values'];
    for (const f of fieldsOf(p.data) ?? []) {
      const has = Object.prototype.hasOwnProperty.call(values, f.id);
      const withheld = !has && !textShown && (f.type === 'string' || (f.type === 'select' && f.other === true));
      const v = has ? oneLine(JSON.stringify(values[f.id])) : withheld ? `(not shown at capture ${cap})` : '(not answered)';
      out.push(`    ${oneLine(f.id)} "${oneLine(f.label)}" = ${v}`);
    }
  }
  return out;
}

/** The commands that answer this request, runnable as printed. */
export function answerHints(p: RequestLike, view: ApprovalView, aep: string): string[] {
  const id = oneLine(p.id);
  const via = p.data['respond_via'];
  if (Array.isArray(via) && !via.includes('control')) return ['  Answered out of band (respond_via): not from here.'];
  const out: string[] = [];
  if (view.required) {
    const allow = view.options.find((x) => x.effect === 'allow' && x.offer && !x.contradicts) ?? view.options.find((x) => x.effect === 'allow' && x.offer);
    const deny = view.options.find((x) => x.effect === 'deny');
    if (allow && view.digest !== undefined) out.push(`  Allow:   ${aep} respond ${id} --option ${oneLine(allow.id)} --digest ${view.digest}`);
    if (deny) out.push(`  Deny:    ${aep} respond ${id} --option ${oneLine(deny.id)} [--text "why"]${allow ? '' : "   (or answer on the agent's machine)"}`);
    return out;
  }
  if (fieldsOf(p.data)) {
    out.push(`  Answer:  ${aep} answer ${id}    or    ${aep} respond ${id} --values '{"<field id>": <value>, …}'`);
  } else if (view.options.length > 0) {
    out.push(`  Answer:  ${aep} respond ${id} --option <id> [--text "…"]    or    ${aep} answer ${id}`);
  } else {
    out.push(`  Answer:  ${aep} respond ${id} --text "…"    or    ${aep} answer ${id}`);
  }
  return out;
}

/** JSON view of the approval facts (inbox --json, respond --show --json). */
export function approvalJson(view: ApprovalView): Record<string, unknown> {
  return {
    required: view.required,
    complete: view.complete,
    ...(view.digest !== undefined ? { digest: view.digest } : {}),
    flagged: view.flagged,
    options: view.options.map((o) => ({ id: o.id, label: o.label, effect: o.effect, contradicts: o.contradicts, offer: o.offer })),
  };
}

// ---- aep tail ---------------------------------------------------------------------------

const SEV_MARK: Record<string, string> = { debug: 'DBG', info: 'INF', notice: 'NTC', warning: 'WRN', error: 'ERR', critical: 'CRT' };

/** One readable line per event: time, severity, agent/session#position, type, subject, a short summary. */
export function formatEvent(e: WireEvent): string {
  const t = typeof e.time === 'string' && e.time.length >= 23 ? e.time.slice(11, 23) : String(e.time ?? '');
  const sev = Object.prototype.hasOwnProperty.call(SEV_MARK, e.severity ?? 'info') ? SEV_MARK[e.severity ?? 'info'] : 'INF';
  const pos = typeof e.seq === 'number' ? `#${e.seq}` : '';
  const where = e.session !== undefined ? `${oneLine(e.agent)}/${oneLine(e.session)}${pos}` : oneLine(e.agent);
  const subj = e.subject !== undefined ? ` ${oneLine(e.subject)}` : '';
  const s = summary(e);
  return `${t} ${sev} ${where} ${oneLine(e.type)}${subj}${s ? `  ${s}` : ''}`;
}

/**
 * A short summary. `aep tail` is a log view, not an approval surface: a long prompt is
 * shortened here with an explicit marker saying how much was left out (never silently).
 */
function summary(e: WireEvent): string {
  const d = e.data ?? {};
  const str = (v: unknown) => {
    if (typeof v !== 'string') return '';
    const one = oneLine(v);
    return one.length > 120 ? `${one.slice(0, 120)}… (+${one.length - 120} more characters; aep inbox shows all)` : one;
  };
  switch (e.type) {
    case 'attention.requested': {
      const n = Array.isArray(d['fields'])
        ? ` (${d['fields'].length} fields)`
        : Array.isArray(d['options'])
          ? ` [${(d['options'] as { id?: unknown }[]).map((o) => oneLine(o.id)).join('/')}]`
          : '';
      return `${str(d['kind'])}${n}: ${str(d['prompt'])}`;
    }
    case 'attention.answered': {
      const a = (d['answer'] ?? {}) as Record<string, unknown>;
      const parts = [
        a['option'] !== undefined ? `option=${str(a['option'])}` : '',
        a['values'] !== undefined ? `values=${str(JSON.stringify(a['values']))}` : '',
        a['text'] !== undefined ? `text=${JSON.stringify(str(a['text']))}` : '',
      ];
      return `${parts.filter(Boolean).join(' ')} via ${str(d['via'])}`;
    }
    case 'attention.resolved':
      return str(d['resolution']);
    case 'control.rejected':
      return `${str(d['reason'])}${e.cause ? ` (cause ${oneLine(e.cause)})` : ''}`;
    case 'control.accepted':
      return e.cause ? `(cause ${oneLine(e.cause)})` : '';
    case 'session.ended':
      return str(d['reason']);
    case 'progress.status':
      return str(d['phase'] ?? d['message']);
    default: {
      const tool = d['tool'] as { name?: unknown } | undefined;
      if (tool && typeof tool.name === 'string') return oneLine(tool.name);
      return '';
    }
  }
}
