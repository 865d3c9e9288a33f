// WebSocket frames (AEP-0003 §2, §4, §5, §6.5, §3.5): the connection-scoped
// messages beside Events. Builders (one place that spells each frame) and a parser that turns a
// text message into an Event, a typed frame, an unknown frame (ignored, AEP-0003 §2) or a
// refusal reason. Pure: no socket here; callers `JSON.stringify` and send.
//
// Project members beyond the brief: `hello.claim` (the emitter's ownership secret, contract C3
// in docs/decisions.md "Answers go to their asker") and `roster.offline` (pending requests whose
// asker is gone, contract C4).
import { AepError } from './errors.js';
import { isCaptureLevel } from './levels.js';
import type { CaptureLevel } from './levels.js';
import type { ResumePosition } from './resume.js';
import { AEP_VERSION, isEventType } from './wire.js';

/** `hello.role` (AEP-0003 §4). */
export type HelloRole = 'emitter' | 'consumer' | 'both';
/** The roles, for validation. */
export const HELLO_ROLES: readonly HelloRole[] = ['emitter', 'consumer', 'both'];

/** `hello.identity` (AEP-0003 §4, §8.2): all members optional; unknown members are kept. */
export interface HelloIdentity {
  agent?: string;
  instance?: string;
  /** Identity document (experimental, AEP-0003 §8.3); `null` in examples means "none". */
  card?: unknown;
  [member: string]: unknown;
}

/** `capabilities.control` (AEP-0003 §4; AEP-0004 §3): authoritative `accepts`, ack window. */
export interface ControlCapability {
  accepts: string[];
  ack_window_ms?: number;
}

/** `hello.capabilities` / discovery `capabilities` (AEP-0003 §4). Unknown keys are ignored, never refused. */
export interface Capabilities {
  emits?: string[];
  capture?: CaptureLevel[];
  control?: ControlCapability;
  replay?: { buffer?: number; all?: boolean };
  filters?: string[];
  /** `{}` iff the `roster` frame is implemented (AEP-0003 §4.1 rule 1). */
  roster?: Record<string, unknown>;
  experimental?: Record<string, unknown>;
  [key: string]: unknown;
}

/** `hello` in either direction (AEP-0003 §4). */
export interface HelloFrame {
  type: 'hello';
  versions: string[];
  role?: HelloRole;
  identity?: HelloIdentity;
  capabilities?: Capabilities;
  /** The emitter's claim secret (contract C3): 22-64 base64url characters. Never log it. */
  claim?: string;
}

/** `subscribe` (AEP-0003 §6.5). The relay validates `filter` with `compileFilter`. */
export interface SubscribeFrame {
  type: 'subscribe';
  id: string;
  filter?: Record<string, unknown>;
  from?: 'all' | ResumePosition[];
  capture?: CaptureLevel;
}

/** `subscribed` / `unsubscribe` / `unsubscribed` (AEP-0003 §6.5): the subscription id. */
export interface SubscribedFrame {
  type: 'subscribed';
  id: string;
}
export interface UnsubscribeFrame {
  type: 'unsubscribe';
  id: string;
}
export interface UnsubscribedFrame {
  type: 'unsubscribed';
  id: string;
}

/** One roster entry: a live (connection, claimed session) pair (AEP-0003 §4.1). */
export interface RosterEntry {
  session: string;
  agent?: string;
  instance?: string;
  /** The connection's declared `capabilities.control`, verbatim. */
  control?: ControlCapability;
  emits?: string[];
  [member: string]: unknown;
}

/**
 * A pending request whose asker has no live connection (contract C4): surfaces show it as
 * "agent offline"; an emitter that owns `(source, session)` again dismisses it.
 */
export interface OfflineRequest {
  /** The `attention.requested` id. */
  request: string;
  session: string;
  agent: string;
  source: string;
  /** RFC 3339 time the asker went away. */
  since: string;
}

/** `roster` request (consumer → endpoint). */
export interface RosterRequestFrame {
  type: 'roster';
  id: string;
}
/** `roster` reply (endpoint → consumer): a complete snapshot. */
export interface RosterReplyFrame {
  type: 'roster';
  id: string;
  entries: RosterEntry[];
  /** Contract C4; absent on a relay that does not track offline requests. */
  offline?: OfflineRequest[];
}

/** `ping` / `pong` (AEP-0003 §3.5.5): `pong` echoes `t`. */
export interface PingFrame {
  type: 'ping';
  t?: unknown;
}
export interface PongFrame {
  type: 'pong';
  t?: unknown;
}

/** `error` (AEP-0003 §2, AEP-0004 §4.2): `id` correlates a subscribe/roster, `cause` a command. */
export interface ErrorFrame {
  type: 'error';
  code: string;
  detail?: string;
  id?: string;
  cause?: string;
  /** With `version-unsupported`: the versions the endpoint speaks. */
  versions?: string[];
}

/** `replay-exhausted` (AEP-0003 §5). */
export interface ReplayExhaustedFrame {
  type: 'replay-exhausted';
  sub: string;
  session: string;
  earliest: { epoch: number; seq: number };
}

/** One delivered position in `closing` (AEP-0003 §3.5.4). */
export interface DeliveredPosition {
  sub: string;
  session: string;
  epoch: number;
  seq: number;
}
/** `closing` (AEP-0003 §3.5.4): sent before a deliberate close; consumers never rely on it. */
export interface ClosingFrame {
  type: 'closing';
  reason: string;
  delivered: DeliveredPosition[];
}

/** Every 0.1 frame (AEP-0003 §2: the frame catalogue). */
export type Frame =
  | HelloFrame
  | SubscribeFrame
  | SubscribedFrame
  | UnsubscribeFrame
  | UnsubscribedFrame
  | RosterRequestFrame
  | RosterReplyFrame
  | PingFrame
  | PongFrame
  | ErrorFrame
  | ReplayExhaustedFrame
  | ClosingFrame;

/** The 0.1 frame types (AEP-0003 §2). */
export const FRAME_TYPES = [
  'hello',
  'subscribe',
  'subscribed',
  'unsubscribe',
  'unsubscribed',
  'roster',
  'error',
  'replay-exhausted',
  'closing',
  'ping',
  'pong',
] as const;

// ---- claims (contract C3) -------------------------------------------------------------------

/** A claim: 22-64 base64url characters (contract C3). */
export const CLAIM_PATTERN = '^[A-Za-z0-9_-]{22,64}$';
const CLAIM_RE = new RegExp(CLAIM_PATTERN);
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** True for a well-formed claim. */
export function isClaim(v: unknown): v is string {
  return typeof v === 'string' && CLAIM_RE.test(v);
}

/** Unpadded base64url of bytes (RFC 4648 §5). */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]! + B64URL[n & 63]!;
  }
  const rest = bytes.length - i;
  if (rest === 1) {
    const n = bytes[i]! << 16;
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]!;
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8);
    out += B64URL[(n >> 18) & 63]! + B64URL[(n >> 12) & 63]! + B64URL[(n >> 6) & 63]!;
  }
  return out;
}

/**
 * A fresh claim: 32 random bytes as base64url (43 characters, contract C3). `fill` defaults to
 * `crypto.getRandomValues`; throws `AEP_NO_RANDOM` when there is none.
 */
export function generateClaim(fill?: (bytes: Uint8Array) => void): string {
  const bytes = new Uint8Array(32);
  if (fill) fill(bytes);
  else {
    const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
    if (!c || typeof c.getRandomValues !== 'function')
      throw new AepError('AEP_NO_RANDOM', 'globalThis.crypto.getRandomValues is not available; pass a random fill');
    c.getRandomValues(bytes);
  }
  return base64url(bytes);
}

// ---- builders -------------------------------------------------------------------------------

/** Input of {@link helloFrame}. */
export interface HelloInput {
  role?: HelloRole;
  identity?: HelloIdentity;
  capabilities?: Capabilities;
  claim?: string;
  /** Default `["0.1"]`. */
  versions?: readonly string[];
}

/**
 * A client `hello` (AEP-0003 §4): members in the brief's order, absent ones omitted (never
 * `null`). Throws `AepError('AEP_FRAME_INVALID')` for an unknown role or a malformed claim.
 */
export function helloFrame(input: HelloInput = {}): HelloFrame {
  const f: HelloFrame = { type: 'hello', versions: [...(input.versions ?? [AEP_VERSION])] };
  if (input.role !== undefined) {
    if (!HELLO_ROLES.includes(input.role))
      throw new AepError('AEP_FRAME_INVALID', `hello.role must be emitter, consumer or both (AEP-0003 §4), got ${JSON.stringify(input.role)}`);
    f.role = input.role;
  }
  if (input.identity !== undefined) f.identity = input.identity;
  if (input.capabilities !== undefined) f.capabilities = input.capabilities;
  if (input.claim !== undefined) {
    if (!isClaim(input.claim)) throw new AepError('AEP_FRAME_INVALID', 'hello.claim must be 22-64 base64url characters (contract C3)');
    f.claim = input.claim;
  }
  return f;
}

/** The relay's `hello` reply (AEP-0003 §4 [choice]): role `both`, the discovery capabilities. */
export function relayHelloFrame(capabilities: Capabilities, versions: readonly string[] = [AEP_VERSION]): HelloFrame {
  return { type: 'hello', versions: [...versions], role: 'both', capabilities };
}

/** Input of {@link subscribeFrame}. */
export interface SubscribeInput {
  id: string;
  filter?: Record<string, unknown>;
  from?: 'all' | readonly ResumePosition[];
  capture?: CaptureLevel;
}

/** A `subscribe` (AEP-0003 §6.5); an empty filter is omitted (same as `{}`). */
export function subscribeFrame(input: SubscribeInput): SubscribeFrame {
  const f: SubscribeFrame = { type: 'subscribe', id: input.id };
  if (input.filter !== undefined && Object.keys(input.filter).length > 0) f.filter = input.filter;
  if (input.from !== undefined) f.from = input.from === 'all' ? 'all' : input.from.map((p) => ({ session: p.session, epoch: p.epoch, seq: p.seq }));
  if (input.capture !== undefined) f.capture = input.capture;
  return f;
}

/** `{type:"subscribed", id}`. */
export function subscribedFrame(id: string): SubscribedFrame {
  return { type: 'subscribed', id };
}
/** `{type:"unsubscribe", id}`. */
export function unsubscribeFrame(id: string): UnsubscribeFrame {
  return { type: 'unsubscribe', id };
}
/** `{type:"unsubscribed", id}`. */
export function unsubscribedFrame(id: string): UnsubscribedFrame {
  return { type: 'unsubscribed', id };
}
/** A `roster` request (AEP-0003 §4.1): ask only an endpoint that advertised `capabilities.roster`. */
export function rosterRequestFrame(id: string): RosterRequestFrame {
  return { type: 'roster', id };
}

/** A `roster` reply; `offline` (contract C4) only when given. */
export function rosterReplyFrame(id: string, entries: RosterEntry[], offline?: OfflineRequest[]): RosterReplyFrame {
  const f: RosterReplyFrame = { type: 'roster', id, entries };
  if (offline !== undefined) f.offline = offline;
  return f;
}

/** `{type:"ping", t}`. */
export function pingFrame(t: unknown = Date.now()): PingFrame {
  return { type: 'ping', t };
}

/** The `pong` answering a ping: echoes its `t` (AEP-0003 §3.5.5). */
export function pongFrame(t: unknown): PongFrame {
  return t === undefined ? { type: 'pong' } : { type: 'pong', t };
}

/** Input of {@link errorFrame}. */
export interface ErrorInput {
  code: string;
  detail?: string;
  id?: string;
  cause?: string;
  versions?: readonly string[];
}

/** An `error` frame (AEP-0003 §2); absent members omitted. */
export function errorFrame(input: ErrorInput): ErrorFrame {
  const f: ErrorFrame = { type: 'error', code: input.code };
  if (input.id !== undefined) f.id = input.id;
  if (input.cause !== undefined) f.cause = input.cause;
  if (input.detail !== undefined) f.detail = input.detail;
  if (input.versions !== undefined) f.versions = [...input.versions];
  return f;
}

/** `{type:"replay-exhausted", sub, session, earliest}` (AEP-0003 §5). */
export function replayExhaustedFrame(sub: string, session: string, earliest: { epoch: number; seq: number }): ReplayExhaustedFrame {
  return { type: 'replay-exhausted', sub, session, earliest: { epoch: earliest.epoch, seq: earliest.seq } };
}

/** `{type:"closing", reason, delivered}` (AEP-0003 §3.5.4). */
export function closingFrame(reason: string, delivered: readonly DeliveredPosition[]): ClosingFrame {
  return { type: 'closing', reason, delivered: delivered.map((d) => ({ sub: d.sub, session: d.session, epoch: d.epoch, seq: d.seq })) };
}

/** One frame as the text of a WS message. */
export function encodeFrame(frame: Frame): string {
  return JSON.stringify(frame);
}

// ---- parser ---------------------------------------------------------------------------------

/** What one WS text message is (AEP-0003 §2). */
export type SocketMessage =
  /** An Event (its `type` holds a dot); the envelope is NOT validated here. */
  | { kind: 'event'; type: string; event: Record<string, unknown> }
  /** A 0.1 frame whose members have the shapes above. */
  | { kind: 'frame'; frame: Frame }
  /** A frame type outside the 0.1 catalogue: MUST be ignored (AEP-0003 §2, [checker: ignore-unknown]). */
  | { kind: 'unknown'; type: string; value: Record<string, unknown> }
  /** Not JSON, not an object, no string `type`, or a 0.1 frame with a malformed member (`reason` names the rule). */
  | { kind: 'invalid'; reason: string; type?: string; value?: unknown };

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isUint(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}

function isStrArray(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function nonEmpty(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

function optString(o: Record<string, unknown>, k: string): boolean {
  return !Object.prototype.hasOwnProperty.call(o, k) || typeof o[k] === 'string';
}

function has(o: Record<string, unknown>, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function isPosition(v: unknown): v is ResumePosition {
  return isObj(v) && typeof v['session'] === 'string' && isUint(v['seq']) && (!has(v, 'epoch') || isUint(v['epoch']));
}

function isOffline(v: unknown): v is OfflineRequest {
  return (
    isObj(v) &&
    nonEmpty(v['request']) &&
    typeof v['session'] === 'string' &&
    typeof v['agent'] === 'string' &&
    typeof v['source'] === 'string' &&
    typeof v['since'] === 'string'
  );
}

/** Checks one parsed object against the frame catalogue; `reason` names the broken rule. */
function checkFrame(type: string, o: Record<string, unknown>): string | undefined {
  switch (type) {
    case 'hello':
      if (!isStrArray(o['versions'])) return 'hello.versions must be an array of strings (AEP-0003 §4)';
      if (has(o, 'role') && !HELLO_ROLES.includes(o['role'] as HelloRole)) return 'hello.role must be emitter, consumer or both (AEP-0003 §4)';
      if (has(o, 'identity') && o['identity'] !== null && !isObj(o['identity'])) return 'hello.identity must be an object (AEP-0003 §4)';
      if (has(o, 'capabilities') && !isObj(o['capabilities'])) return 'hello.capabilities must be an object (AEP-0003 §4)';
      if (has(o, 'claim') && !isClaim(o['claim'])) return 'hello.claim must be 22-64 base64url characters (contract C3)';
      return undefined;
    case 'subscribe':
      if (!nonEmpty(o['id'])) return 'subscribe.id must be a non-empty string (AEP-0003 §6.5)';
      if (has(o, 'filter') && !isObj(o['filter'])) return 'subscribe.filter must be an object (AEP-0003 §6.1)';
      if (has(o, 'from') && o['from'] !== 'all' && !(Array.isArray(o['from']) && o['from'].every(isPosition)))
        return 'subscribe.from must be "all" or an array of {session, epoch?, seq} (AEP-0003 §6.5)';
      if (has(o, 'capture') && !isCaptureLevel(o['capture'])) return 'subscribe.capture must be one of none, metadata, redacted, full (AEP-0003 §6.4)';
      return undefined;
    case 'subscribed':
    case 'unsubscribe':
    case 'unsubscribed':
      return nonEmpty(o['id']) ? undefined : `${type}.id must be a non-empty string (AEP-0003 §6.5)`;
    case 'roster':
      if (!nonEmpty(o['id'])) return 'roster.id must be a non-empty string (AEP-0003 §4.1)';
      if (has(o, 'entries') && !(Array.isArray(o['entries']) && o['entries'].every((e) => isObj(e) && typeof e['session'] === 'string')))
        return 'roster.entries must be an array of {session, …} (AEP-0003 §4.1)';
      if (has(o, 'offline') && !(Array.isArray(o['offline']) && o['offline'].every(isOffline)))
        return 'roster.offline must be an array of {request, session, agent, source, since} (contract C4)';
      return undefined;
    case 'ping':
    case 'pong':
      return undefined;
    case 'error':
      if (!nonEmpty(o['code'])) return 'error.code must be a non-empty string (AEP-0003 §2.2)';
      if (!optString(o, 'detail') || !optString(o, 'id') || !optString(o, 'cause')) return 'error.detail, id and cause must be strings (AEP-0003 §2.2)';
      if (has(o, 'versions') && !isStrArray(o['versions'])) return 'error.versions must be an array of strings (AEP-0003 §4)';
      return undefined;
    case 'replay-exhausted': {
      const e = o['earliest'];
      if (typeof o['sub'] !== 'string' || typeof o['session'] !== 'string') return 'replay-exhausted needs string sub and session (AEP-0003 §5)';
      if (!isObj(e) || !isUint(e['epoch']) || !isUint(e['seq'])) return 'replay-exhausted.earliest must be {epoch, seq} integers >= 0 (AEP-0003 §5)';
      return undefined;
    }
    case 'closing':
      if (has(o, 'reason') && typeof o['reason'] !== 'string') return 'closing.reason must be a string (AEP-0003 §3.5.4)';
      if (
        has(o, 'delivered') &&
        !(Array.isArray(o['delivered']) && o['delivered'].every((d) => isObj(d) && typeof d['session'] === 'string' && isUint(d['seq'])))
      )
        return 'closing.delivered must be an array of {sub, session, epoch, seq} (AEP-0003 §3.5.4)';
      return undefined;
    default:
      return undefined;
  }
}

const KNOWN = new Set<string>(FRAME_TYPES);

/**
 * Classifies an already-parsed WS message value (see {@link parseSocketMessage}). Frames are
 * returned as the received object (unknown members kept, AEP-0003 §1 tolerance), after their
 * catalogue members were checked.
 */
export function classifySocketValue(value: unknown): SocketMessage {
  if (!isObj(value)) return { kind: 'invalid', reason: 'a WebSocket message must be one JSON object (AEP-0003 §2)', value };
  const type = value['type'];
  if (typeof type !== 'string' || type.length === 0) return { kind: 'invalid', reason: 'a WebSocket message needs a string "type" (AEP-0003 §2)', value };
  if (isEventType(type)) return { kind: 'event', type, event: value };
  if (!KNOWN.has(type)) return { kind: 'unknown', type, value };
  const reason = checkFrame(type, value);
  if (reason !== undefined) return { kind: 'invalid', reason, type, value };
  return { kind: 'frame', frame: value as unknown as Frame };
}

/** Parses one WS text message (AEP-0003 §2: one JSON object per text frame). Never throws. */
export function parseSocketMessage(text: string): SocketMessage {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return { kind: 'invalid', reason: 'a WebSocket message must be JSON (AEP-0003 §2)' };
  }
  return classifySocketValue(value);
}

/** True for a `roster` reply (it carries `entries`), false for a request. */
export function isRosterReply(f: RosterRequestFrame | RosterReplyFrame): f is RosterReplyFrame {
  return Array.isArray((f as { entries?: unknown }).entries);
}
