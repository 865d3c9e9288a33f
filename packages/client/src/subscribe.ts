// Consumer side: SSE `/stream` and WS `subscribe` (AEP-0003 §3.3, §6.5, §7).
import type { SubscribeOptions, Subscription, WireEvent } from './types.js';

/**
 * Subscribe to a relay over SSE (default) or WebSocket. Deduplicates on `(source, id)`
 * (AEP-0001 §7.4) and resumes after a disconnect without a gap (AEP-0003 §7). `onEvent`
 * receives each event once, with its exact received bytes.
 */
export function subscribe(options: SubscribeOptions, onEvent: (event: WireEvent, raw: string) => void): Subscription {
  void options; void onEvent; throw new Error('not implemented');
}
