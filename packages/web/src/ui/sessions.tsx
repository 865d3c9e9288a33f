// Session views: the list of sessions seen, and a live, filterable timeline per session
// (runs, tools, attention, control...). Filters are local to the view; they never change what
// the inbox receives.
import { useMemo, useState } from 'preact/hooks';
import { compileFilter } from '@aep/protocol';
import type { InboxStore, SessionEntry, SessionStatus, WireEvent } from '../store.js';
import { captureOf, sessionStatus } from '../store.js';
import { visibleText } from '@aep/protocol';
import { Badge, formatTime, requestHref, sessionHref } from './common.js';
import type { AnswerContext } from './request.js';
import { SteerPanel } from './steer.js';

const CATEGORIES = ['session', 'run', 'tool', 'attention', 'control', 'other'] as const;
type Category = (typeof CATEGORIES)[number];

/** Timeline category of an event type (vendor `x.*` types count as other). */
export function categoryOf(type: string): Category {
  const c = type.split('.')[0] ?? '';
  return (CATEGORIES as readonly string[]).includes(c) ? (c as Category) : 'other';
}

/** A one-line, structural summary of an event (agent-authored text is shown quoted). */
function Summary(props: { e: WireEvent }) {
  const { e } = props;
  const d = e.data ?? {};
  const tool = d['tool'];
  const parts: preact.ComponentChildren[] = [];
  if (typeof tool === 'object' && tool !== null && typeof (tool as Record<string, unknown>)['name'] === 'string') {
    parts.push(<code key="t">{(tool as Record<string, unknown>)['name'] as string}</code>);
  }
  if (typeof e.run === 'string')
    parts.push(
      <span key="r" class="hint">
        {' '}
        run <code>{e.run}</code>
      </span>,
    );
  if (e.type === 'attention.requested') {
    const p = d['prompt'];
    parts.push(<span key="k"> {String(d['kind'] ?? '')} </span>);
    // A one-line preview (the request view shows it all): visible marks, never interpreted.
    if (typeof p === 'string') {
      const v = visibleText(p);
      parts.push(
        <q key="p" class="agent-inline" dir="auto">
          {v.length > 140 ? `${v.slice(0, 140)}…` : v}
        </q>,
      );
    }
  } else if (e.type.startsWith('attention.') || e.type === 'control.attention.respond') {
    if (typeof e.subject === 'string')
      parts.push(
        <span key="s" class="hint">
          {' '}
          request <code>{e.subject.slice(-10)}</code>
        </span>,
      );
    const res = d['resolution'];
    if (typeof res === 'string') parts.push(<span key="res"> {res}</span>);
  } else if (e.type === 'control.rejected' || e.type === 'control.accepted') {
    if (typeof d['reason'] === 'string') parts.push(<span key="re"> {d['reason']}</span>);
    if (typeof e.cause === 'string')
      parts.push(
        <span key="c" class="hint">
          {' '}
          for <code>{e.cause.slice(-10)}</code>
        </span>,
      );
  }
  const status = d['status'];
  if (typeof status === 'string') parts.push(<span key="st"> {status}</span>);
  return <>{parts}</>;
}

const STATUS_ORDER: Record<SessionStatus, number> = { waiting: 0, working: 1, finished: 2 };
const STATUS_LABEL: Record<SessionStatus, string> = { waiting: 'waiting for you', working: 'working', finished: 'finished' };

/**
 * All sessions seen, with what each is doing (issue 17 item 5): sessions waiting for a person
 * first (longest waiting first), then working, then finished, most recently active first.
 */
export function SessionList(props: { store: InboxStore; offline?: ReadonlySet<string> }) {
  const waiting = new Map<string, { n: number; since: number }>();
  for (const r of props.store.pending()) {
    if (r.status !== 'pending') continue; // answered, not resolved yet: the agent has it
    const k = r.event.session ?? '';
    const w = waiting.get(k) ?? { n: 0, since: Infinity };
    w.n++;
    if (!Number.isNaN(r.at)) w.since = Math.min(w.since, r.at);
    waiting.set(k, w);
  }
  const rows = [...props.store.sessions.values()].map((s) => ({
    s,
    st: sessionStatus(s, waiting.get(s.session)?.n ?? 0),
    since: waiting.get(s.session)?.since ?? Infinity,
  }));
  rows.sort((a, b) => STATUS_ORDER[a.st.status] - STATUS_ORDER[b.st.status] || (a.st.status === 'waiting' ? a.since - b.since : b.s.lastAt - a.s.lastAt));
  if (rows.length === 0) return <p class="empty">No sessions yet. Events appear here as agents emit them.</p>;
  const counts = { waiting: 0, working: 0, finished: 0 };
  for (const r of rows) counts[r.st.status]++;
  return (
    <>
      <p class="hint" data-testid="session-counts">
        {counts.waiting} waiting for you · {counts.working} working · {counts.finished} finished
      </p>
      <ul class="sessions" aria-label="Sessions by status">
        {rows.map(({ s, st }) => (
          <li key={s.session} data-session={s.session} data-status={st.status}>
            <a href={sessionHref(s.session)}>
              <span class={`status status-${st.status}`}>{STATUS_LABEL[st.status]}</span>
              <span class="mono">{visibleText(s.session)}</span>
              <span class="hint">
                {' '}
                {visibleText([...s.agents].join(', '))}
                {st.detail ? ` · ${st.detail}` : ''} · {s.events.length} events
              </span>
            </a>
          </li>
        ))}
      </ul>
    </>
  );
}

/** The live timeline of one session. */
export function SessionTimeline(props: { session: SessionEntry | undefined; name: string; ctx: AnswerContext }) {
  const [off, setOff] = useState<Set<Category>>(new Set());
  const [q, setQ] = useState('');
  const [attr, setAttr] = useState('');
  // An attr-match filter (AEP-0003 §6.1), compiled by the same code the relay uses; invalid
  // filters are reported and match nothing (fail closed, §6.2), never everything.
  const compiled = useMemo((): { match: (e: unknown) => boolean } | { error: string } | null => {
    const text = attr.trim();
    if (!text) return null;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { error: 'not JSON' };
    }
    const c = compileFilter(parsed);
    return c.ok ? { match: c.match } : { error: c.issues.map((i) => i.message).join('; ') };
  }, [attr]);
  const s = props.session;
  const events = s ? s.events : [];
  const needle = q.trim().toLowerCase();
  const shown = events.filter(
    (e) =>
      !off.has(categoryOf(e.type)) &&
      (!needle ||
        e.type.toLowerCase().includes(needle) ||
        (e.agent ?? '').toLowerCase().includes(needle) ||
        (e.subject ?? '').toLowerCase().includes(needle)) &&
      (compiled === null || ('match' in compiled ? compiled.match(e) : false)),
  );
  const counts = new Map<Category, number>();
  for (const e of events) counts.set(categoryOf(e.type), (counts.get(categoryOf(e.type)) ?? 0) + 1);
  return (
    <section class="timeline" aria-labelledby="tl-h">
      <p class="back-inline">
        <a href="#/sessions">← All sessions</a>
      </p>
      <h2 id="tl-h" tabIndex={-1}>
        Session <span class="mono">{props.name}</span>
      </h2>
      {s ? (
        <p class="hint">
          Agents: {[...s.agents].join(', ') || 'unknown'} · {events.length} events
        </p>
      ) : (
        <p class="empty">No events for this session yet.</p>
      )}
      <SteerPanel session={props.name} ctx={props.ctx} />
      <fieldset class="filters">
        <legend>Show</legend>
        {CATEGORIES.map((c) => (
          <label key={c} class="chip">
            <input
              type="checkbox"
              checked={!off.has(c)}
              onChange={(ev) => {
                const next = new Set(off);
                if (ev.currentTarget.checked) next.delete(c);
                else next.add(c);
                setOff(next);
              }}
            />{' '}
            {c} <span class="hint">({counts.get(c) ?? 0})</span>
          </label>
        ))}
        <label class="search">
          <span>Filter by type, agent or subject</span>
          <input type="search" value={q} onInput={(ev) => setQ(ev.currentTarget.value)} placeholder="e.g. tool.completed" />
        </label>
        <label class="search">
          <span>attr-match filter (JSON)</span>
          <input
            type="text"
            class="mono"
            value={attr}
            spellcheck={false}
            aria-invalid={compiled !== null && 'error' in compiled ? true : undefined}
            aria-describedby="attr-err"
            onInput={(ev) => setAttr(ev.currentTarget.value)}
            placeholder='{"type":"tool.*","severity":{"gte":"notice"}}'
          />
        </label>
        {compiled !== null && 'error' in compiled ? (
          <p id="attr-err" class="bad hint" role="status">
            Filter not applied, nothing matches: {compiled.error}
          </p>
        ) : (
          <span id="attr-err" />
        )}
      </fieldset>
      <ol class="events" aria-live="polite" aria-relevant="additions">
        {shown.map((e) => (
          <li key={`${e.source}\u0000${e.id}`} class={`ev cat-${categoryOf(e.type)}`}>
            <time dateTime={e.time}>{formatTime(e.time)}</time>
            <span class="type">{e.type === 'attention.requested' ? <a href={requestHref(e)}>{e.type}</a> : e.type}</span>
            <span class="who">
              <span class="mono">
                {e.agent ?? ''}
                {typeof e.seq === 'number' ? ` #${e.seq}` : ''}
              </span>
              {captureOf(e) !== 'metadata' ? (
                <>
                  {' '}
                  <Badge kind={`cap-${captureOf(e)}`}>{captureOf(e)}</Badge>
                </>
              ) : null}
            </span>
            <span class="sum">
              <Summary e={e} />
            </span>
          </li>
        ))}
      </ol>
    </section>
  );
}
