// "Notify me": Web Push on this device (issue 17, contract C10). The inbox asks the relay for its
// VAPID public key, subscribes this browser's push manager, and registers the subscription on the
// relay (stored per token); a notifier (`aep up --notify push` or `aep notify push`) sends the
// notifications. What a notification shows is the notifier's capture ceiling (default metadata:
// structure only); tapping one opens the request here, where it is answered in the real form.
import { useEffect, useState } from 'preact/hooks';
import { compileFilter } from '@aep/protocol';

const PUSH_KEY = 'aep.inbox.push';

type State =
  | { kind: 'checking' }
  | { kind: 'unsupported'; why: string }
  | { kind: 'unconfigured'; why: string }
  | { kind: 'off'; key: string }
  | { kind: 'on'; key: string; id: string }
  | { kind: 'denied' };

function b64urlToBytes(s: string): Uint8Array {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (s.length % 4)) % 4));
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i);
  return out;
}

function saved(): { id: string; endpoint: string } | null {
  try {
    const v = JSON.parse(localStorage.getItem(PUSH_KEY) ?? 'null') as { id?: unknown; endpoint?: unknown } | null;
    return v && typeof v.id === 'string' && typeof v.endpoint === 'string' ? { id: v.id, endpoint: v.endpoint } : null;
  } catch {
    return null;
  }
}

/** The panel. */
export function NotifyPanel(props: { base: string; token: string }) {
  const [state, setState] = useState<State>({ kind: 'checking' });
  const [filter, setFilter] = useState('');
  const [msg, setMsg] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const headers = (): Record<string, string> => (props.token ? { Authorization: `Bearer ${props.token}` } : {});

  useEffect(() => {
    let live = true;
    void (async () => {
      if (!window.isSecureContext)
        return setState({
          kind: 'unsupported',
          why: 'Notifications need the inbox over HTTPS (or on localhost on this machine). See docs/phone.md for a tunnel or a TLS proxy.',
        });
      if (!('serviceWorker' in navigator) || !('PushManager' in window) || !('Notification' in window))
        return setState({
          kind: 'unsupported',
          why: 'This browser has no Web Push here. On iPhone and iPad, add the inbox to the home screen first (Share → Add to Home Screen), then open it from there.',
        });
      let res: Response;
      try {
        res = await fetch(new URL('push/config', props.base), { headers: headers(), cache: 'no-store' });
      } catch {
        if (live) setState({ kind: 'unconfigured', why: 'The relay cannot be reached right now.' });
        return;
      }
      if (!live) return;
      if (res.status === 404) return setState({ kind: 'unconfigured', why: 'This relay has no push keys. Start it with aep up (which generates them).' });
      if (!res.ok) return setState({ kind: 'unconfigured', why: `The relay refused (${res.status}): push needs the relay token.` });
      const { vapidPublicKey } = (await res.json()) as { vapidPublicKey: string };
      if (Notification.permission === 'denied') return setState({ kind: 'denied' });
      const reg = await navigator.serviceWorker.ready;
      const sub = await reg.pushManager.getSubscription();
      const mine = saved();
      if (!live) return;
      if (sub && mine && mine.endpoint === sub.endpoint) setState({ kind: 'on', key: vapidPublicKey, id: mine.id });
      else setState({ kind: 'off', key: vapidPublicKey });
    })().catch((err: unknown) => {
      if (live) setState({ kind: 'unsupported', why: `Push is not available: ${err instanceof Error ? err.message : String(err)}` });
    });
    return () => {
      live = false;
    };
  }, [props.base, props.token]);

  const turnOn = async (key: string) => {
    setBusy(true);
    setMsg(null);
    try {
      let parsedFilter: Record<string, unknown> | undefined;
      if (filter.trim()) {
        let f: unknown;
        try {
          f = JSON.parse(filter);
        } catch {
          throw new Error('the filter is not JSON');
        }
        const c = compileFilter(f);
        if (!c.ok) throw new Error(`the filter is not a valid attr-match filter: ${c.issues.map((i) => i.message).join('; ')}`);
        parsedFilter = f as Record<string, unknown>;
      }
      const perm = await Notification.requestPermission();
      if (perm !== 'granted') {
        setState(perm === 'denied' ? { kind: 'denied' } : { kind: 'off', key });
        setMsg('Notifications were not allowed in this browser.');
        return;
      }
      const reg = await navigator.serviceWorker.ready;
      const sub =
        (await reg.pushManager.getSubscription()) ??
        (await reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: b64urlToBytes(key) as BufferSource }));
      const body = { ...(sub.toJSON() as Record<string, unknown>), ...(parsedFilter ? { filter: parsedFilter } : {}) };
      const res = await fetch(new URL('push/subscriptions', props.base), {
        method: 'POST',
        headers: { ...headers(), 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      const j = (await res.json().catch(() => ({}))) as { id?: string; detail?: string };
      if (res.status !== 201 || typeof j.id !== 'string')
        throw new Error(`the relay refused the subscription (${res.status}${j.detail ? `: ${j.detail}` : ''})`);
      try {
        localStorage.setItem(PUSH_KEY, JSON.stringify({ id: j.id, endpoint: sub.endpoint }));
      } catch {
        /* private mode */
      }
      setState({ kind: 'on', key, id: j.id });
      setMsg('This device will be notified.');
    } catch (err) {
      setMsg(`Could not turn notifications on: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
    }
  };

  const turnOff = async (key: string, id: string) => {
    setBusy(true);
    setMsg(null);
    try {
      await fetch(new URL(`push/subscriptions/${encodeURIComponent(id)}`, props.base), { method: 'DELETE', headers: headers() }).catch(() => undefined);
      const reg = await navigator.serviceWorker.ready;
      await (await reg.pushManager.getSubscription())?.unsubscribe();
      try {
        localStorage.removeItem(PUSH_KEY);
      } catch {
        /* ignore */
      }
      setState({ kind: 'off', key });
      setMsg('Notifications are off for this device.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="notify-panel" aria-labelledby="np-h" data-state={state.kind}>
      <h2 id="np-h">Notifications on this device</h2>
      <p class="hint">
        A notification says who is waiting and for what, e.g. “claude-code asks permission: Bash”. By default it carries no text the agent wrote (lock screens
        and push services are outside the capture boundary); tapping it opens the request here, where you read it whole and answer. A notifier must be running:{' '}
        <code>aep up --notify push</code> or <code>aep notify push</code>.
      </p>
      {state.kind === 'checking' ? <p role="status">Checking…</p> : null}
      {state.kind === 'unsupported' || state.kind === 'unconfigured' ? (
        <p class="note" role="note" data-testid="push-unavailable">
          {state.why}
        </p>
      ) : null}
      {state.kind === 'denied' ? (
        <p class="note" role="note">
          Notifications are blocked for this site in the browser settings.
        </p>
      ) : null}
      {state.kind === 'off' ? (
        <form
          onSubmit={(ev) => {
            ev.preventDefault();
            void turnOn(state.key);
          }}
        >
          <label for="np-filter">
            Only requests matching (optional attr-match filter, e.g. <code>{'{"agent":"claude-code"}'}</code>)
          </label>
          <textarea id="np-filter" spellcheck={false} value={filter} onInput={(ev) => setFilter(ev.currentTarget.value)} />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy}>
              Turn on notifications
            </button>
          </div>
        </form>
      ) : null}
      {state.kind === 'on' ? (
        <div class="actions">
          <p data-testid="push-on">This device receives notifications.</p>
          <button
            type="button"
            disabled={busy}
            onClick={() => {
              void turnOff(state.key, state.id);
            }}
          >
            Turn off
          </button>
        </div>
      ) : null}
      {msg ? (
        <p role="status" data-testid="push-message">
          {msg}
        </p>
      ) : null}
    </section>
  );
}
