// What `aep inbox` and `aep answer` show next to a pending request besides the request itself
// (issue 14 item 3): whether its agent is offline (contract C4: the relay's roster lists it in
// `offline`), and, for a request already answered, the command that carried the answer (who sent
// it, from where). Loaded lazily (imports the SDK).
import type { OfflineRequest } from '@aep/protocol';
import type { PendingAttention, WireEvent } from '@aep/client';
import { mapClientError } from './relay.js';

/** Key of a request in the maps below. */
export function requestKey(session: string, id: string): string {
  return `${session}\n${id}`;
}

/**
 * The relay's C4 `offline` list, keyed by {@link requestKey}: one roster read over an
 * authenticated socket. `undefined` when the relay gives no roster (not advertised, refused, no
 * reply): nothing is then claimed offline.
 */
export async function offlineRequests(url: string, token: string | undefined): Promise<Map<string, OfflineRequest> | undefined> {
  const { CommandSender } = await import('@aep/client/node');
  const sender = new CommandSender({ url, ...(token ? { token } : {}), connectTimeoutMs: 5_000 });
  try {
    const snap = await sender.roster();
    if (!snap) return undefined;
    return new Map((snap.offline ?? []).map((o) => [requestKey(o.session, o.request), o]));
  } finally {
    await sender.close();
  }
}

/**
 * The `control.attention.respond` commands that answered these requests (the `cause` of their
 * `attention.answered`), by command id: one replay-only read filtered on those ids. Empty when
 * none is answered yet.
 */
export async function answerCommands(url: string, token: string | undefined, pending: readonly PendingAttention[]): Promise<Map<string, WireEvent>> {
  const causes = [...new Set(pending.map((p) => p.answeredEvent?.cause).filter((c): c is string => typeof c === 'string' && c !== ''))];
  const out = new Map<string, WireEvent>();
  if (causes.length === 0) return out;
  const { subscribe } = await import('@aep/client/node');
  try {
    const sub = subscribe(
      {
        url,
        ...(token ? { token } : {}),
        filter: { type: 'control.attention.respond', id: causes.slice(0, 500) },
        from: 'all',
        live: false,
        transport: 'sse',
        reconnect: { maxAttempts: 0 },
      },
      (e) => {
        if (!out.has(e.id)) out.set(e.id, e);
      },
    );
    await sub.done;
  } catch (err) {
    mapClientError(err, url);
  }
  return out;
}
