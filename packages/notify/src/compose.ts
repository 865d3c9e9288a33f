// What a notification says, and which one-tap answers it may carry (pure). Text on a lock screen
// or a third-party server leaves the capture boundary, so below `redacted` nothing the agent
// authored is used at all: the title and body are built from structure only (agent, kind,
// subject, counts, option ids that pass an identifier check), whatever the event declares
// (a sender claiming `metadata` for real text gains nothing). At an opted-in `redacted`/`full`
// ceiling the prompt and labels are shown through `visibleText`.
//
// One-tap answers (docs/decisions.md "Notifiers (issue 17)"): a person chooses only what they can
// read. Below `redacted` that leaves refusals only (Deny on a permission request, refusing ids of
// closed choices). At `redacted`+ closed choices get one button each (at most three), and a
// permission request gets Allow only when the complete approval text arrived (`approvalView`
// complete) and fits the channel whole: never cut, never folded (contract C1).
import { approvalView, captureRank, optionEffect, visibleText } from '@aep/protocol';
import type { CaptureLevel, OptionEffect } from '@aep/protocol';

/** The event shape the composer reads (untrusted; every member optional but `id`). */
export interface RequestEvent {
  id: string;
  type: string;
  source?: string;
  agent?: string;
  session?: string;
  subject?: string;
  severity?: string;
  capture?: string;
  time?: string;
  data?: Record<string, unknown>;
  [ext: string]: unknown;
}

/** One one-tap answer the notification may carry. */
export interface ActionSpec {
  /** Button text. */
  label: string;
  effect: OptionEffect;
  /** The answer it sends: an option id, or form values (a single-select form). */
  answer: { option: string } | { values: Record<string, string> };
  /** Needs `approvalproof` (a permissive answer to an approval request). */
  approval: boolean;
}

/** A composed notification. */
export interface Composed {
  title: string;
  body: string;
  /** 1 (min) - 5 (max), from severity and the send's reason. */
  priority: number;
  kind: string;
  /** The level of what is shown: `metadata` (structure only) or the opted-in level. */
  shown: CaptureLevel;
  actions: ActionSpec[];
  /** The approval text shown whole (`approval` actions carry its proof), when there is one. */
  approvalText?: string;
  /** Why no one-tap answer is offered (for the body and the logs). */
  noActions?: string;
}

/** Composer options. */
export interface ComposeOptions {
  /** The channel's ceiling. */
  ceiling: CaptureLevel;
  reason: 'first' | 'reminder' | 'escalation';
  /** How long the request has been pending (ms). */
  pendingMs: number;
  /** Most characters the channel shows in its body (ntfy: 4096 bytes; Web Push: about 3 kB). */
  maxBody: number;
  /** Most one-tap buttons (ntfy: 3). */
  maxActions: number;
  now: number;
}

const KINDS = new Set(['permission', 'input', 'auth', 'review', 'form', 'other']);

/** An identifier-like string (no spaces, no markup) or undefined: what may be shown below `redacted`. */
export function ident(v: unknown, max = 48): string | undefined {
  if (typeof v !== 'string' || v.length === 0 || v.length > 200) return undefined;
  if (!/^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/.test(v)) return undefined;
  return v.length > max ? `${v.slice(0, max - 1)}…` : v;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "3 min", "2 h" */
export function ago(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} d`;
}

function sevPriority(sev: unknown): number {
  switch (sev) {
    case 'critical':
    case 'error':
      return 5;
    case 'warning':
      return 4;
    default:
      return 3;
  }
}

interface Opt {
  id: string;
  label?: string;
}

function optionsOf(data: Record<string, unknown>): Opt[] {
  const raw = data['options'];
  if (!Array.isArray(raw)) return [];
  const out: Opt[] = [];
  for (const o of raw) {
    if (typeof o !== 'object' || o === null || typeof (o as Record<string, unknown>)['id'] !== 'string') continue;
    const r = o as Record<string, unknown>;
    out.push(typeof r['label'] === 'string' ? { id: r['id'] as string, label: r['label'] } : { id: r['id'] as string });
  }
  return out;
}

function cap(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

function effectWord(e: OptionEffect): string {
  return e === 'allow' ? 'Allow' : 'Deny';
}

/** The structural title: "{agent} asks permission: Bash", "{agent} asks 2 questions", … */
function structuralTitle(agent: string, kind: string, subject: string | undefined, nFields: number): string {
  switch (kind) {
    case 'permission':
      return `${agent} asks permission${subject ? `: ${subject}` : ''}`;
    case 'form':
      return `${agent} asks ${plural(nFields, 'question', 'questions')}`;
    case 'input':
      return `${agent} asks for input${subject ? `: ${subject}` : ''}`;
    case 'auth':
      return `${agent} needs you to sign in${subject ? `: ${subject}` : ''}`;
    case 'review':
      return `${agent} asks for a review${subject ? `: ${subject}` : ''}`;
    default:
      return `${agent} needs you${subject ? `: ${subject}` : ''}`;
  }
}

/**
 * Compose the notification for `e` as this channel received it (already at its ceiling). Reads
 * agent-authored text only when both the ceiling and the event's own level are `redacted`+.
 */
export function compose(e: RequestEvent, o: ComposeOptions): Composed {
  const data = typeof e.data === 'object' && e.data !== null ? e.data : {};
  const declared = typeof e.capture === 'string' ? e.capture : 'metadata';
  const shown: CaptureLevel =
    captureRank(o.ceiling) >= 2 && captureRank(declared as CaptureLevel) >= 2
      ? captureRank(o.ceiling) <= captureRank(declared as CaptureLevel)
        ? o.ceiling
        : (declared as CaptureLevel)
      : 'metadata';
  const text = shown !== 'metadata';
  const kind = typeof data['kind'] === 'string' && KINDS.has(data['kind']) ? data['kind'] : 'other';
  const agent = ident(e.agent, 32) ?? 'an agent';
  const subject = ident(e.subject);
  const session = ident(e.session);
  const fields = Array.isArray(data['fields']) ? (data['fields'] as unknown[]) : [];
  const nFields = kind === 'form' ? fields.length : 0;
  const priority = Math.min(5, (o.reason === 'escalation' ? 1 : 0) + sevPriority(e.severity));
  const prefix = o.reason === 'reminder' ? 'Still waiting: ' : o.reason === 'escalation' ? 'Nobody answered: ' : '';
  const title = prefix + structuralTitle(agent, kind, subject, nFields);
  const lines: string[] = [];
  const wait = `waiting ${ago(o.pendingMs)}`;
  lines.push(`${session ? `session ${session} · ` : ''}${wait}`);
  const respondVia = data['respond_via'];
  const controlOk = !Array.isArray(respondVia) || respondVia.includes('control');
  const expires = typeof data['expires_at'] === 'string' ? Date.parse(data['expires_at']) : NaN;
  const actions: ActionSpec[] = [];
  let noActions: string | undefined;
  let approvalText: string | undefined;
  const opts = optionsOf(data);
  const view = approvalView(e);

  if (text) {
    const prompt = typeof data['prompt'] === 'string' ? data['prompt'] : '';
    if (view.required) {
      // The approval text is shown whole or not at all (C1: never cut, never folded).
      if (view.complete && view.text !== undefined && visibleText(view.text).length + 200 <= o.maxBody) {
        approvalText = view.text;
        lines.push(visibleText(view.text));
      } else if (view.complete && view.text !== undefined) {
        lines.push(`The complete request (${plural(view.text.split('\n').length, 'line', 'lines')}) is too long for this channel: open the inbox to read it.`);
      } else {
        lines.push("The complete request did not reach this channel: open the inbox, or answer on the agent's machine.");
      }
    } else if (prompt) {
      lines.push(cap(visibleText(prompt), Math.max(40, o.maxBody - 400)));
    }
    if (kind === 'form') {
      for (const f of fields.slice(0, 4)) {
        const lab =
          typeof f === 'object' && f !== null && typeof (f as Record<string, unknown>)['label'] === 'string'
            ? ((f as Record<string, unknown>)['label'] as string)
            : '';
        if (lab) lines.push(`• ${cap(visibleText(lab), 120)}`);
      }
      if (fields.length > 4) lines.push(`• … ${fields.length - 4} more`);
    }
  } else {
    if (kind === 'form') lines.push(plural(nFields, 'question', 'questions') + ': open the inbox to read and answer them.');
    else if (opts.length) lines.push(`Options: ${opts.map((x) => ident(x.id, 24) ?? '?').join(', ')}`);
    lines.push(`Content is withheld on this channel (capture ${o.ceiling}).`);
  }

  if (!controlOk) noActions = "this request is answered on the agent's machine";
  else if (Number.isFinite(expires) && expires <= o.now) noActions = 'the request has expired';
  else if (kind === 'permission') {
    const list = opts.length ? opts : [{ id: 'deny' }, { id: 'allow' }];
    // One Deny and one Allow at most (several ids with one effect would make ambiguous buttons).
    const deny = list.find((x) => optionEffect(x.id) === 'deny');
    const allow = list.find((x) => optionEffect(x.id) === 'allow');
    if (deny) actions.push({ label: effectWord('deny'), effect: 'deny', answer: { option: deny.id }, approval: false });
    if (allow && approvalText !== undefined) actions.push({ label: effectWord('allow'), effect: 'allow', answer: { option: allow.id }, approval: true });
    if (!actions.some((a) => a.effect === 'allow'))
      noActions = text
        ? 'Allow needs the complete request in view: open the inbox'
        : "Allow is never offered where the request cannot be read: open the inbox, or answer on the agent's machine";
  } else if (kind !== 'form' && opts.length) {
    for (const x of opts) {
      const eff = optionEffect(x.id);
      if (text) {
        const label = cap(visibleText(x.label ?? x.id), 40);
        // An effect the label contradicts is spelled out on the button (C1: effects come from ids).
        const claims = optionEffect((/^[\s"'([{]*([A-Za-z_]+)/.exec(label)?.[1] ?? '').toLowerCase());
        actions.push({
          label: eff !== 'other' && claims !== 'other' && claims !== eff ? `${label} (${eff})` : label,
          effect: eff,
          answer: { option: x.id },
          approval: false,
        });
      } else if (eff === 'deny') {
        const id = ident(x.id, 20);
        if (id) actions.push({ label: id.charAt(0).toUpperCase() + id.slice(1), effect: 'deny', answer: { option: x.id }, approval: false });
      }
    }
    if (!text && actions.length === 0) noActions = 'the choices cannot be read on this channel: open the inbox';
  } else if (kind === 'form' && text && fields.length === 1) {
    // A single closed question: one button per choice.
    const f = fields[0] as Record<string, unknown>;
    const choices = Array.isArray(f['choices']) ? (f['choices'] as Array<Record<string, unknown>>) : [];
    if (f['type'] === 'select' && f['multi'] !== true && typeof f['id'] === 'string' && choices.length > 0) {
      for (const c of choices) {
        if (typeof c?.['id'] !== 'string') continue;
        actions.push({
          label: cap(visibleText(typeof c['label'] === 'string' ? c['label'] : c['id']), 40),
          effect: 'other',
          answer: { values: { [f['id']]: c['id'] } },
          approval: false,
        });
      }
    } else noActions = 'open the inbox to answer';
  } else noActions = 'open the inbox to answer';

  if (actions.length > o.maxActions) {
    // A partial list of choices would bias the answer: all or none.
    actions.length = 0;
    noActions = `${opts.length || 'the'} choices do not fit on this channel: open the inbox`;
  }
  if (noActions) lines.push(`${noActions.charAt(0).toUpperCase()}${noActions.slice(1)}.`);
  let body = lines.join('\n');
  if (body.length > o.maxBody) body = `${body.slice(0, o.maxBody - 1)}…`;
  const out: Composed = { title: cap(title, 200), body, priority, kind, shown, actions };
  if (approvalText !== undefined) out.approvalText = approvalText;
  if (noActions !== undefined) out.noActions = noActions;
  return out;
}

/** Compose a one-off event notification ("run failed", "session ended"): structure only below `redacted`. */
export function composeEvent(e: RequestEvent): { title: string; body: string; priority: number } {
  const agent = ident(e.agent, 32) ?? 'an agent';
  const session = ident(e.session);
  const what: Record<string, string> = {
    'run.finished': 'finished a run',
    'run.failed': 'run failed',
    'run.cancelled': 'run was cancelled',
    'session.ended': 'session ended',
    'error.raised': 'raised an error',
    'tool.failed': 'tool failed',
  };
  const t = what[e.type] ?? ident(e.type, 64) ?? 'event';
  return { title: `${agent}: ${t}`, body: session ? `session ${session}` : '', priority: sevPriority(e.severity) };
}
