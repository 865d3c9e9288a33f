// The inbox application: token gate, live stream, routes (#/ inbox, #/r/{session}/{id} request,
// #/sessions, #/s/{session} timeline).
import { Component } from 'preact';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { InboxStore, requestKey } from '../store.js';
import type { RequestEntry } from '../store.js';
import { openStream } from '../sse.js';
import type { StreamState } from '../sse.js';
import { ControlChannel } from '../control.js';
import type { RosterSnapshot } from '../control.js';
import { contentWithheld } from '../form.js';
import { AgentText, Badge, formatTime, Guard, kindOf, promptOf, requestHref } from './common.js';
import { RequestDetail } from './request.js';
import type { AnswerContext } from './request.js';
import { SessionList, SessionTimeline } from './sessions.js';
import { NotifyPanel } from './push.js';
import { PolicyView } from './policy.js';

const TOKEN_KEY = 'aep.inbox.token';

function readToken(): string | null {
  try {
    return localStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

type Route =
  | { view: 'inbox' }
  | { view: 'request'; session: string; id: string }
  | { view: 'sessions' }
  | { view: 'notify' }
  | { view: 'session'; session: string }
  | { view: 'policy' };

function parseRoute(hash: string): Route {
  const parts = hash.replace(/^#\/?/, '').split('/');
  const dec = (s: string | undefined) => {
    try {
      return decodeURIComponent(s ?? '');
    } catch {
      return '';
    }
  };
  if (parts[0] === 'r' && parts.length >= 3) return { view: 'request', session: dec(parts[1]), id: dec(parts[2]) };
  if (parts[0] === 's' && parts.length >= 2) return { view: 'session', session: dec(parts[1]) };
  if (parts[0] === 'sessions') return { view: 'sessions' };
  if (parts[0] === 'notify') return { view: 'notify' };
  if (parts[0] === 'policy') return { view: 'policy' };
  return { view: 'inbox' };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** Re-render on store changes, at most once per animation frame (a replay folds thousands). */
function useStore(store: InboxStore): number {
  const [rev, setRev] = useState(store.rev);
  useEffect(() => {
    let raf = 0;
    const off = store.onChange(() => {
      if (raf) return;
      raf = requestAnimationFrame(() => {
        raf = 0;
        setRev(store.rev);
      });
    });
    return () => {
      off();
      if (raf) cancelAnimationFrame(raf);
    };
  }, [store]);
  return rev;
}

/**
 * Does this relay let anyone read without a token? `GET events` (discovery, AEP-0003 §3.2.1)
 * without credentials: 200 = anonymous reading allowed, anything else (401 from `aep up`,
 * which always has a token) = not. Only then is the read-only path offered.
 */
async function anonymousReadAllowed(): Promise<boolean> {
  try {
    const res = await fetch(new URL('events', new URL('./', location.href)), { cache: 'no-store', credentials: 'omit' });
    return res.status === 200;
  } catch {
    return false;
  }
}

function TokenScreen(props: { onToken: (t: string) => void; error?: string }) {
  const [value, setValue] = useState('');
  const [anon, setAnon] = useState<boolean | null>(null);
  useEffect(() => {
    let live = true;
    void anonymousReadAllowed().then((ok) => {
      if (live) setAnon(ok);
    });
    return () => {
      live = false;
    };
  }, []);
  return (
    <main class="token-screen">
      <h1>AEP inbox</h1>
      <form
        onSubmit={(ev) => {
          ev.preventDefault();
          if (value.trim()) props.onToken(value.trim());
        }}
      >
        <label for="token">Relay token</label>
        <p class="hint" id="token-hint">
          Printed by <code>aep up</code> (and saved in its state directory). Kept in this browser's storage only; it is never put in the page address.
        </p>
        <input
          id="token"
          type="password"
          autoFocus
          autoComplete="off"
          spellcheck={false}
          aria-describedby="token-hint"
          value={value}
          onInput={(ev) => setValue(ev.currentTarget.value)}
        />
        {props.error ? (
          <p class="bad" role="alert">
            {props.error}
          </p>
        ) : null}
        <div class="actions">
          <button type="submit" class="primary">
            Open the inbox
          </button>
          {anon === true ? (
            <button type="button" onClick={() => props.onToken('')}>
              Continue without a token (read-only)
            </button>
          ) : null}
        </div>
        {anon === false ? (
          <p class="hint" data-testid="token-required">
            This relay does not allow reading without a token.
          </p>
        ) : null}
      </form>
    </main>
  );
}

/** `offline`: the time its agent went away (contract C4), when the relay lists it offline. */
interface ItemProps {
  r: RequestEntry;
  selected: boolean;
  offline: string | undefined;
  status: string;
}

/** One card; re-rendered only when its entry, status or selection changes (a replay folds thousands). */
class InboxItem extends Component<ItemProps> {
  override shouldComponentUpdate(next: ItemProps): boolean {
    return next.r !== this.props.r || next.selected !== this.props.selected || next.offline !== this.props.offline || next.status !== this.props.status;
  }
  override render() {
    return (
      <Guard what="request">
        <InboxCard {...this.props} />
      </Guard>
    );
  }
}

function InboxCard(props: ItemProps) {
  const { r, selected, offline } = props;
  const e = r.event;
  const kind = kindOf(e);
  const withheld = contentWithheld(e);
  const n = Array.isArray(e.data?.['fields']) ? (e.data?.['fields'] as unknown[]).length : 0;
  return (
    <li class={`item${selected ? ' selected' : ''}`} data-request={e.id} data-status={r.status} data-offline={offline !== undefined ? 'true' : undefined}>
      <a href={requestHref(e)} aria-current={selected ? 'true' : undefined}>
        <span class="item-prov">
          <Badge kind={`kind-${kind}`}>
            {kind}
            {kind === 'form' && n ? ` · ${n}` : ''}
          </Badge>
          <span class="mono agent">{e.agent ?? 'unknown'}</span>
          <span class="mono session">{e.session ?? ''}</span>
          <time dateTime={e.time}>{formatTime(e.time)}</time>
          <Badge kind={`cap-${e.capture ?? 'metadata'}`}>{e.capture ?? 'metadata'}</Badge>
          {r.status === 'answered' ? (
            <Badge kind="st-answered" title="the agent recorded an answer and has not resolved it yet">
              answered
            </Badge>
          ) : null}
          {offline !== undefined ? (
            <Badge kind="offline" title="the agent that asked is not connected: this request cannot be answered">
              agent offline since {formatTime(offline)}
            </Badge>
          ) : null}
        </span>
        <AgentText text={promptOf(e)} synthesized={withheld} clamp />
      </a>
    </li>
  );
}

function InboxList(props: { store: InboxStore; selected?: string; offline: ReadonlyMap<string, string>; state: StreamState; synced: boolean }) {
  const pending = props.store.pending();
  if (pending.length === 0) {
    // Never a stale "all clear": an empty list means nothing only while the stream is live.
    if (props.state !== 'live') {
      return (
        <p class="empty" data-testid="inbox-offline" role="status">
          Not connected to the relay ({props.state === 'connecting' ? 'connecting' : 'reconnecting'}…). Requests waiting for you cannot be shown until the
          connection is back: an empty list here means “unknown”, not “nothing waiting”.
        </p>
      );
    }
    if (!props.synced)
      return (
        <p class="empty" data-testid="inbox-loading" role="status">
          Checking for requests…
        </p>
      );
    return (
      <p class="empty" data-testid="inbox-empty">
        Nothing is waiting for you. New requests from agents appear here live.
      </p>
    );
  }
  return (
    <ul class="inbox" aria-label={`${pending.length} pending requests`}>
      {pending.map((r) => (
        <InboxItem key={r.key} r={r} status={r.status} selected={props.selected === r.key} offline={props.offline.get(r.key)} />
      ))}
    </ul>
  );
}

function Status(props: { state: StreamState; detail?: string }) {
  const label: Record<StreamState, string> = {
    connecting: 'connecting…',
    live: 'live',
    reconnecting: 'reconnecting…',
    unauthorized: 'token refused',
    error: 'error',
  };
  return (
    <span class={`conn conn-${props.state}`} role="status" title={props.detail}>
      {label[props.state]}
    </span>
  );
}

/** Root component. */
export function App() {
  const [token, setToken] = useState<string | null>(() => readToken());
  const [authError, setAuthError] = useState<string | undefined>(undefined);
  if (token === null) {
    return (
      <TokenScreen
        error={authError}
        onToken={(t) => {
          try {
            localStorage.setItem(TOKEN_KEY, t);
          } catch {
            /* private mode: keep it for this page only */
          }
          setAuthError(undefined);
          setToken(t);
        }}
      />
    );
  }
  return (
    <Inbox
      token={token}
      onUnauthorized={(msg) => {
        try {
          localStorage.removeItem(TOKEN_KEY);
        } catch {
          /* ignore */
        }
        setAuthError(msg);
        setToken(null);
      }}
    />
  );
}

function Inbox(props: { token: string; onUnauthorized: (msg: string) => void }) {
  const base = useMemo(() => new URL('./', location.href).href, []);
  const store = useMemo(() => new InboxStore(), []);
  const control = useMemo(
    () =>
      new ControlChannel({
        base,
        token: props.token,
        onEvent: (e) => {
          if (store.apply(e)) store.notify();
        },
      }),
    [base, props.token, store],
  );
  const [conn, setConn] = useState<{ state: StreamState; detail?: string }>({ state: 'connecting' });
  // Has this page seen the relay's answer at least once (a replay chunk, or a live stream that
  // stayed quiet for a second: nothing held)? Until then an empty list is not "nothing waiting".
  const [synced, setSynced] = useState(false);
  const onUnauth = useRef(props.onUnauthorized);
  onUnauth.current = props.onUnauthorized;
  useEffect(() => {
    let changed = false;
    const stop = openStream({
      base,
      token: props.token,
      onEvent: (e) => {
        if (store.apply(e)) {
          changed = true;
          control.observe(e);
        }
      },
      onBatch: () => {
        setSynced(true);
        if (changed) {
          changed = false;
          store.notify();
        }
      },
      onState: (state, detail) => {
        if (state === 'unauthorized') {
          // Never blame a token nobody entered (issue 14 item 5).
          onUnauth.current(
            props.token === ''
              ? 'This relay does not allow reading without a token. Enter the token printed by aep up.'
              : 'The relay refused this token. Enter the token printed by aep up.',
          );
          return;
        }
        setConn(detail === undefined ? { state } : { state, detail });
        if (state === 'live') setTimeout(() => setSynced(true), 1000);
      },
    });
    return () => {
      stop();
      control.close();
    };
  }, [base, props.token, store, control]);
  useStore(store);
  const route = useRoute();
  // The last roster snapshot (live claims, C4 offline requests), shared by every view. Refreshed
  // when a view asks (request opened, a command settled), when the set of open requests
  // changes, and every 15 s (an agent going away produces no event to react to).
  const [snapshot, setSnapshot] = useState<RosterSnapshot | null>(null);
  const refreshRoster = useMemo(() => {
    let inflight: Promise<RosterSnapshot | null> | null = null;
    return (): Promise<RosterSnapshot | null> => {
      inflight ??= control.roster().then((s) => {
        inflight = null;
        if (s) setSnapshot(s);
        return s;
      });
      return inflight;
    };
  }, [control]);
  const pendingCount = store.pending().length;
  useEffect(() => {
    void refreshRoster();
  }, [pendingCount, conn.state]);
  useEffect(() => {
    const t = setInterval(() => {
      if (document.visibilityState !== 'hidden') void refreshRoster();
    }, 15_000);
    return () => clearInterval(t);
  }, [refreshRoster]);
  const offline = useMemo(() => new Map((snapshot?.offline ?? []).map((o) => [requestKey(o.session, o.request), o.since])), [snapshot]);
  const ctx: AnswerContext = { send: (cmd) => control.send(cmd), roster: refreshRoster, snapshot, store, host: location.host, canAnswer: props.token !== '' };
  useEffect(() => {
    document.title = pendingCount ? `(${pendingCount}) AEP inbox` : 'AEP inbox';
  }, [pendingCount]);

  let main;
  let selectedKey: string | undefined;
  if (route.view === 'request') {
    const entry = store.findRequest(route.id, route.session);
    selectedKey = entry?.key;
    main = entry ? (
      <Guard key={entry.key} what="request">
        <RequestDetail entry={entry} ctx={ctx} />
      </Guard>
    ) : (
      <p class="empty">{conn.state === 'live' ? 'This request is not known to the relay (it may have been evicted from its buffer).' : 'Loading…'}</p>
    );
  } else if (route.view === 'session') {
    main = (
      <Guard key={route.session} what="session">
        <SessionTimeline session={store.sessions.get(route.session)} name={route.session} ctx={ctx} />
      </Guard>
    );
  } else if (route.view === 'policy') {
    main = (
      <Guard what="policy">
        <PolicyView ctx={ctx} />
      </Guard>
    );
  } else if (route.view === 'sessions') {
    main = (
      <section aria-labelledby="sl-h">
        <h2 id="sl-h">Sessions</h2>
        <SessionList store={store} />
      </section>
    );
  } else if (route.view === 'notify') {
    main = (
      <Guard what="notifications">
        <NotifyPanel base={base} token={props.token} />
      </Guard>
    );
  }
  const showList = route.view === 'inbox' || route.view === 'request';
  return (
    <div class={`app view-${route.view}`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <h1>
          <a href="#/">
            AEP<span class="wide-only"> inbox</span>
          </a>
        </h1>
        <nav aria-label="Views">
          <a href="#/" aria-current={route.view === 'inbox' ? 'page' : undefined}>
            Inbox{' '}
            <span class="count" data-testid="pending-count">
              {pendingCount}
            </span>
          </a>
          <a href="#/sessions" aria-current={route.view === 'sessions' || route.view === 'session' ? 'page' : undefined}>
            Sessions
          </a>
          <a href="#/policy" aria-current={route.view === 'policy' ? 'page' : undefined}>
            Policy
          </a>
          <a href="#/notify" aria-current={route.view === 'notify' ? 'page' : undefined} aria-label="Notifications" title="Notifications">
            <svg class="bell" viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
              <path
                fill="currentColor"
                d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3a1.5 1.5 0 0 0-3 0v1.16A7 7 0 0 0 5 11v5l-2 2v1h18v-1Z"
              />
            </svg>
            <span class="wide-only"> Notify me</span>
          </a>
        </nav>
        <Status state={conn.state} detail={conn.detail} />
        <button type="button" class="link" onClick={() => props.onUnauthorized('')}>
          <span class="wide-only">Change </span>token
        </button>
      </header>
      <p class="sr-only" aria-live="polite" aria-atomic="true">
        {pendingCount} pending request{pendingCount === 1 ? '' : 's'}
      </p>
      {conn.state !== 'live' && conn.state !== 'connecting' && pendingCount > 0 ? (
        <p class="stale" role="status" data-testid="stale-banner">
          Reconnecting to the relay: this list may be out of date until the connection is back.
        </p>
      ) : null}
      <div class="body">
        {showList ? (
          <aside class="list" aria-label="Pending requests">
            <h2 class="sr-only">Pending requests</h2>
            <InboxList store={store} selected={selectedKey} offline={offline} state={conn.state} synced={synced} />
          </aside>
        ) : null}
        <main id="main" class="main" tabIndex={-1}>
          {route.view === 'request' ? (
            <p class="back">
              <a href="#/">← All pending requests</a>
            </p>
          ) : null}
          {main ?? (route.view === 'inbox' ? <p class="hint pick">Pick a request to answer it.</p> : null)}
        </main>
      </div>
    </div>
  );
}
