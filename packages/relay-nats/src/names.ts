// Subject, stream and bucket names (docs/scale-out.md "Mapping"). Session ids are arbitrary
// strings (AEP-0003 §9.6: untrusted), NATS subject tokens are not: a session becomes one token,
// base64url of its UTF-8 bytes ('b' prefix), or the sha256 of it ('h' prefix) when long, so no
// session can inject `.`, `*`, `>` or whitespace into a subject.
import { createHash } from 'node:crypto';

/** Stream names (also the prefix of subjects and buckets): letters, digits, `_`, `-`. */
export const STREAM_NAME = /^[A-Za-z0-9_-]{1,32}$/;

/** Longest session kept readable (base64url) in a subject; longer ones are hashed. */
const MAX_PLAIN = 96;

/** One subject token for a session. */
export function sessionToken(session: string): string {
  const bytes = Buffer.from(session, 'utf8');
  if (bytes.length <= MAX_PLAIN) return `b${bytes.toString('base64url')}`;
  return `h${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Every name one cluster uses, derived from the stream name. */
export class Names {
  readonly events: string;
  readonly agentSubject: string;
  readonly claimsBucket: string;
  readonly relaysBucket: string;
  readonly tokensBucket: string;
  readonly evictedBucket: string;
  constructor(readonly stream: string) {
    const p = `aep.${stream}`;
    this.events = `${p}.ev.>`;
    this.agentSubject = `${p}.ev.a`;
    this.claimsBucket = `${stream}_claims`;
    this.relaysBucket = `${stream}_relays`;
    this.tokensBucket = `${stream}_tokens`;
    this.evictedBucket = `${stream}_evicted`;
  }
  /** The subject of a session's Events (the per-subject limit is the per-session replay depth). */
  sessionSubject(session: string | null): string {
    return session === null ? this.agentSubject : `aep.${this.stream}.ev.s.${sessionToken(session)}`;
  }
  /** Where one relay takes the commands routed to its connections (request/reply). */
  commandSubject(relay: string): string {
    return `aep.${this.stream}.cmd.${relay}`;
  }
}

/** `Nats-Msg-Id` of an Event: its dedupe key `(source, id)` (AEP-0001 §7.4), hashed to a fixed size. */
export function msgId(source: string, id: string): string {
  return createHash('sha256').update(source).update('\u0000').update(id).digest('base64url');
}

/** A KV key for an arbitrary string (sessions in the tombstone bucket). */
export function kvKey(s: string): string {
  return sessionToken(s);
}
