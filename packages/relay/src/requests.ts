// Attention requests the relay holds (AEP-0006 §3; brief 06 §4.1): their kind and field spec
// (to gate answers, capture.ts, and to know which scope an answer needs, auth.ts).
import { isObject } from './util.js';

/** What the relay knows of one `attention.requested`. */
export interface RequestInfo {
  readonly session: string;
  readonly id: string;
  readonly source: string;
  readonly agent: string;
  readonly kind: string | undefined;
  readonly fields: readonly unknown[] | undefined;
}

/** Requests by (session, id), first seen wins; bounded (the oldest is forgotten past `cap`). */
export class RequestIndex {
  private readonly byKey = new Map<string, RequestInfo>();
  constructor(private readonly cap: number) {}

  private static key(session: string, id: string): string { return `${session}\u0000${id}`; }

  get size(): number { return this.byKey.size; }

  /** The request an answer or lifecycle Event names (`session`, `subject`). */
  get(session: unknown, id: unknown): RequestInfo | undefined {
    return typeof session === 'string' && typeof id === 'string' ? this.byKey.get(RequestIndex.key(session, id)) : undefined;
  }

  /** Record an `attention.requested` (ignored when the pair is already known). */
  observe(ev: Record<string, unknown>): RequestInfo | undefined {
    if (ev['type'] !== 'attention.requested') return undefined;
    const session = ev['session']; const id = ev['id'];
    if (typeof session !== 'string' || typeof id !== 'string') return undefined;
    const key = RequestIndex.key(session, id);
    const known = this.byKey.get(key);
    if (known) return known;
    const data = isObject(ev['data']) ? ev['data'] : {};
    const info: RequestInfo = {
      session, id, source: String(ev['source']), agent: String(ev['agent']),
      kind: typeof data['kind'] === 'string' ? data['kind'] : undefined,
      fields: Array.isArray(data['fields']) ? data['fields'] as unknown[] : undefined,
    };
    this.byKey.set(key, info);
    while (this.byKey.size > this.cap) this.byKey.delete(this.byKey.keys().next().value as string);
    return info;
  }

  /** Field specs of the request an answer (`attention.answered`, `control.attention.respond`) names. */
  readonly fieldsOf = (ev: Record<string, unknown>): readonly unknown[] | undefined => this.get(ev['session'], ev['subject'])?.fields;
}
