// Small shared view pieces: provenance, quoted agent text, badges, time formatting.
// Everything from an event is rendered as text nodes (Preact escapes); nothing uses innerHTML.
import { Component } from 'preact';
import type { ComponentChildren } from 'preact';
import { visibleText } from '@aep/protocol';
import type { WireEvent } from '../store.js';
import { captureOf } from '../store.js';

/** Route to a request's detail view (ids are untrusted: always encoded, AEP-0001 §12). */
export function requestHref(e: WireEvent): string {
  return `#/r/${encodeURIComponent(e.session ?? '')}/${encodeURIComponent(e.id)}`;
}

/** Route to a session's timeline. */
export function sessionHref(session: string): string {
  return `#/s/${encodeURIComponent(session)}`;
}

// One formatter each: `toLocaleTimeString(…, options)` builds a new Intl.DateTimeFormat per
// call, which dominated rendering 1,000 cards (bench/inbox.bench.ts).
const TIME_FMT = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const DATE_FMT = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
const formatted = new Map<string, string>();

/** Local time of an event; the date too when it is not today. */
export function formatTime(iso: string | undefined): string {
  if (typeof iso !== 'string') return 'no time';
  const hit = formatted.get(iso);
  if (hit !== undefined) return hit;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso.slice(0, 40);
  const sameDay = d.toDateString() === new Date().toDateString();
  const t = TIME_FMT.format(d);
  const out = sameDay ? t : `${DATE_FMT.format(d)} ${t}`;
  if (formatted.size > 20_000) formatted.clear();
  formatted.set(iso, out);
  return out;
}

/** A small pill (kind, capture level, status). */
export function Badge(props: { kind?: string; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge${props.kind ? ` badge-${props.kind}` : ''}`} title={props.title}>
      {props.children}
    </span>
  );
}

/**
 * Provenance of an event: who says it (agent), in which session, when, and at what capture level.
 * Rendered in the inbox's own voice and style, visually apart from agent-authored text
 * (AEP-0002 §8: show provenance beside attention text).
 */
export function Provenance(props: { e: WireEvent; linkSession?: boolean }) {
  const { e } = props;
  const cap = captureOf(e);
  return (
    <dl class="prov">
      <div>
        <dt>Agent</dt>
        <dd class="mono">{visibleText(e.agent ?? 'unknown')}</dd>
      </div>
      <div>
        <dt>Session</dt>
        <dd class="mono">
          {props.linkSession !== false && e.session ? <a href={sessionHref(e.session)}>{visibleText(e.session)}</a> : visibleText(e.session ?? '—')}
        </dd>
      </div>
      <div>
        <dt>Time</dt>
        <dd>
          <time dateTime={e.time}>{formatTime(e.time)}</time>
        </dd>
      </div>
      <div>
        <dt>Capture</dt>
        <dd>
          <Badge kind={`cap-${cap}`} title="capture level of this event (AEP-0001 §8)">
            {cap}
          </Badge>
        </dd>
      </div>
    </dl>
  );
}

/**
 * Agent-authored text, quoted and marked as untrusted. Every character goes through
 * `visibleText` (bidi overrides, zero-width and control characters shown as marks, never
 * applied; newlines kept), and `unicode-bidi: isolate` keeps the quote from reordering the
 * provenance around it.
 */
export function AgentText(props: { text: string; synthesized?: boolean; clamp?: boolean }) {
  return (
    <figure class={`agent-text${props.clamp ? ' clamp' : ''}`}>
      <figcaption>{props.synthesized ? 'Synthesized from structure (content withheld)' : 'Agent says (unverified)'}</figcaption>
      <blockquote dir="auto">{visibleText(props.text)}</blockquote>
    </figure>
  );
}

/** The request's prompt as shown: real text, or the structural synthesis at `metadata`. */
export function promptOf(e: WireEvent): string {
  const p = e.data?.['prompt'];
  if (typeof p === 'string') return p;
  return `${e.agent ?? 'agent'} requests ${kindOf(e)}`;
}

/** The request's `kind` (unknown values are kept for display; the UI degrades to a text reply). */
export function kindOf(e: WireEvent): string {
  const k = e.data?.['kind'];
  return typeof k === 'string' ? k : 'other';
}

/**
 * Contains a rendering failure caused by one malformed event, so the rest of the inbox keeps
 * working (bad input never crashes, docs/conventions.md §15).
 */
export class Guard extends Component<{ what: string; children: ComponentChildren }, { failed: boolean }> {
  override state = { failed: false };
  override componentDidCatch(): void {
    this.setState({ failed: true });
  }
  override render() {
    return this.state.failed ? <p class="bad">This {this.props.what} could not be displayed (malformed event).</p> : this.props.children;
  }
}
