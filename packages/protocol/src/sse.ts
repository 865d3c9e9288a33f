// The SSE binding's message codec (AEP-0003 §3.3, §5; AEP-0003 §10): what the
// relay writes on `GET /stream` and what every consumer (client SDK, web inbox, CLI) reads back.
// Pure string functions, no I/O: the relay writes the strings, readers feed decoded text chunks.
//
// Wire hygiene the public live checker depends on (AEP-0003 §10): LF line endings only, every
// message and every comment terminated by a blank line, `data: ` with exactly one space and the
// Event JSON on ONE line. The encoder enforces it; the parser is lenient (WHATWG event-stream
// rules: CRLF, CR or LF end a line) so a proxy that rewrites line endings does not break readers.
import { AepError } from './errors.js';
import type { ResumePosition } from './resume.js';

/** `: ping`, the heartbeat comment (AEP-0003 §3.3: at least every 30 s). */
export const SSE_PING = ': ping\n\n';
/** The comment name of the replay-exhausted marker (AEP-0003 §5, §3.3.3). */
export const SSE_REPLAY_EXHAUSTED = 'replay-exhausted';

/** A message to encode: `event:` name, one-line `data:`, optional `id:`. */
export interface SseOutgoing {
  /** The `event:` line (the Event's AEP `type`); omitted when absent. */
  event?: string;
  /** The `data:` payload: the Event JSON on one line (no CR, no LF). */
  data: string;
  /** The `id:` line (`{session}:{epoch}:{seq}`); omitted when absent. */
  id?: string;
}

function hasLineBreak(s: string): boolean {
  return s.indexOf('\n') >= 0 || s.indexOf('\r') >= 0;
}

/** Text safe inside one SSE line: CR and LF become `?` (session ids are untrusted, AEP-0001 §12). */
export function sseLineSafe(s: string): string {
  return hasLineBreak(s) ? s.replace(/[\r\n]/g, '?') : s;
}

/**
 * Encodes one SSE message: `event: {event}\ndata: {data}\nid: {id}\n\n`. Throws
 * `AepError('AEP_SSE_LINE')` when `data` or `event` holds a line break (a multi-line `data`
 * breaks the checker's `^data: (.+)$` reader, AEP-0003 §10: re-serialize the JSON first). An
 * `id` holding a line break is omitted (the Event then simply has no resume position on SSE).
 */
export function encodeSseMessage(m: SseOutgoing): string {
  if (hasLineBreak(m.data)) throw new AepError('AEP_SSE_LINE', 'SSE data must be one line: serialize the Event without line breaks (AEP-0003 §3.3)');
  if (m.event !== undefined && hasLineBreak(m.event)) throw new AepError('AEP_SSE_LINE', 'an SSE event name cannot hold a line break (AEP-0003 §3.3)');
  const ev = m.event !== undefined ? `event: ${m.event}\n` : '';
  const id = m.id !== undefined && !hasLineBreak(m.id) ? `id: ${m.id}\n` : '';
  return `${ev}data: ${m.data}\n${id}\n`;
}

/**
 * The SSE message of one Event (AEP-0003 §3.3): `event:` = its type, `data:` = its JSON (the
 * stored line), `id:` = `{session}:{epoch}:{seq}` only for a sequenced session Event (pass
 * `position`); agent-scoped and seq-less Events get no `id:`. A session holding a line break
 * gets no `id:` either (it could not be carried on one line).
 */
export function encodeSseEvent(type: string, json: string, position?: ResumePosition): string {
  const id = position !== undefined ? `${position.session}:${position.epoch}:${position.seq}` : undefined;
  return encodeSseMessage({ event: type, data: json, ...(id !== undefined ? { id } : {}) });
}

/** Encodes a comment line `: {text}\n\n` (line breaks in `text` become `?`). */
export function encodeSseComment(text: string): string {
  return `: ${sseLineSafe(text)}\n\n`;
}

/**
 * The replay-exhausted marker `: replay-exhausted {session} {epoch}:{seq}\n\n` (AEP-0003 §5;
 * AEP-0003 §5): sent before replaying a session whose requested position predates the buffer;
 * the pair is the earliest position still held.
 */
export function encodeReplayExhausted(session: string, earliest: { epoch: number; seq: number }): string {
  return encodeSseComment(`${SSE_REPLAY_EXHAUSTED} ${session} ${earliest.epoch}:${earliest.seq}`);
}

/** A dispatched SSE message (WHATWG event-stream "dispatch the event"). */
export interface SseMessage {
  kind: 'message';
  /** The `event:` name; `message` when the block had none. */
  event: string;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The `id:` of this block, when it had one (not the sticky last-event-id). */
  id?: string;
}

/** The replay-exhausted marker, parsed (AEP-0003 §5). */
export interface SseReplayExhausted {
  kind: 'replay-exhausted';
  session: string;
  earliest: { epoch: number; seq: number };
}

/** The `: ping` heartbeat. */
export interface SsePing {
  kind: 'ping';
}

/** Any other comment line (consumers ignore unknown comments, AEP-0003 §1). */
export interface SseComment {
  kind: 'comment';
  /** The comment text after `:` and one optional space. */
  text: string;
}

/** What the parser yields, in stream order. */
export type SseItem = SseMessage | SseReplayExhausted | SsePing | SseComment;

const UINT = /^(?:0|[1-9][0-9]*)$/;

function uint(s: string): number | undefined {
  if (!UINT.test(s)) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * Classifies one comment text (after the `:` and one optional space). `replay-exhausted` is
 * parsed from the right: the last space-separated token is `{epoch}:{seq}` and everything
 * between the name and it is the session (session ids are arbitrary strings, AEP-0001 §5.1).
 * A malformed marker is an ordinary comment.
 */
export function parseSseComment(text: string): SseReplayExhausted | SsePing | SseComment {
  if (text === 'ping') return { kind: 'ping' };
  const prefix = `${SSE_REPLAY_EXHAUSTED} `;
  if (text.startsWith(prefix)) {
    const rest = text.slice(prefix.length);
    const sp = rest.lastIndexOf(' ');
    if (sp > 0) {
      const session = rest.slice(0, sp);
      const pos = rest.slice(sp + 1);
      const colon = pos.indexOf(':');
      const epoch = colon > 0 ? uint(pos.slice(0, colon)) : undefined;
      const seq = colon > 0 ? uint(pos.slice(colon + 1)) : undefined;
      if (epoch !== undefined && seq !== undefined) return { kind: 'replay-exhausted', session, earliest: { epoch, seq } };
    }
  }
  return { kind: 'comment', text };
}

/** Options of {@link SseParser}. */
export interface SseParserOptions {
  /**
   * Longest line kept while waiting for its end, in UTF-16 code units; default 64 Mi. Past it
   * `push` throws `AepError('AEP_SSE_LINE_TOO_LONG')` (a peer that never ends a line cannot
   * grow the reader's memory without bound; the caller drops the connection).
   */
  maxLineLength?: number;
}

/**
 * Incremental SSE parser (WHATWG HTML "event stream interpretation"): feed decoded text chunks
 * split anywhere (also between CR and LF, or inside a UTF-16 pair the decoder kept), get the
 * items in order. A leading BOM is skipped; `retry:` and unknown fields are ignored; an `id:`
 * holding NUL is ignored; a block without `data:` dispatches nothing; an unterminated block at
 * the end of the stream is discarded (call {@link SseParser.end}). Comments are yielded as soon
 * as their line ends, the replay-exhausted marker already parsed.
 */
export class SseParser {
  private buf = '';
  private start = true;
  private event = '';
  private data: string[] = [];
  private id: string | undefined;
  private readonly maxLine: number;
  /** The sticky last event id of the stream (WHATWG `lastEventId`), `''` before any. */
  lastEventId = '';

  constructor(opts: SseParserOptions = {}) {
    this.maxLine = opts.maxLineLength ?? 64 * 1024 * 1024;
  }

  /** Feeds one chunk; returns the items completed by it. */
  push(chunk: string): SseItem[] {
    const out: SseItem[] = [];
    this.buf = this.buf.length === 0 ? chunk : this.buf + chunk;
    if (this.start) {
      if (this.buf.length === 0) return out;
      if (this.buf.charCodeAt(0) === 0xfeff) this.buf = this.buf.slice(1);
      this.start = false;
    }
    let pos = 0;
    const n = this.buf.length;
    while (pos < n) {
      let i = pos;
      let c = 0;
      while (i < n) {
        c = this.buf.charCodeAt(i);
        if (c === 10 || c === 13) break;
        i++;
      }
      if (i >= n) break; // no line end yet
      // A CR at the very end of the buffer may be the first half of a CRLF split across chunks.
      if (c === 13 && i + 1 >= n) break;
      this.line(this.buf.slice(pos, i), out);
      pos = c === 13 && this.buf.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
    }
    this.buf = pos === 0 ? this.buf : this.buf.slice(pos);
    if (this.buf.length > this.maxLine) {
      this.buf = '';
      throw new AepError('AEP_SSE_LINE_TOO_LONG', `an SSE line exceeded ${this.maxLine} characters without a line end`);
    }
    return out;
  }

  /**
   * Ends the stream: a pending final CR ends its line; an unterminated line and an
   * undispatched block are discarded (WHATWG: "once the end of the file is reached, any pending
   * data must be discarded"). Returns the last items.
   */
  end(): SseItem[] {
    const out: SseItem[] = [];
    if (this.buf.endsWith('\r')) this.line(this.buf.slice(0, -1), out);
    this.buf = '';
    this.event = '';
    this.data = [];
    this.id = undefined;
    return out;
  }

  private line(line: string, out: SseItem[]): void {
    if (line.length === 0) {
      this.dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) {
      out.push(parseSseComment(line.charCodeAt(1) === 32 ? line.slice(2) : line.slice(1)));
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (value.indexOf('\u0000') < 0) {
          this.id = value;
          this.lastEventId = value;
        }
        break;
      default:
        break; // `retry` and unknown fields are ignored
    }
  }

  private dispatch(out: SseItem[]): void {
    const data = this.data;
    const event = this.event;
    const id = this.id;
    this.data = [];
    this.event = '';
    this.id = undefined;
    if (data.length === 0) return;
    const m: SseMessage = { kind: 'message', event: event === '' ? 'message' : event, data: data.join('\n') };
    if (id !== undefined) m.id = id;
    out.push(m);
  }
}

/** Parses a whole SSE body at once (e.g. a replay-only `live=0` response). */
export function parseSse(body: string, opts?: SseParserOptions): SseItem[] {
  const p = new SseParser(opts);
  return [...p.push(body), ...p.end()];
}
