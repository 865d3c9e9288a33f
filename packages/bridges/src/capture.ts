// What payload survives an exporter's `max_capture` (AEP-0005 §3.3, §4.4). Brief 07 [pin]: the
// conservative route — an event whose capture is above the setting exports no payload at all
// (dropped wholesale), not the field-level down-level of a relay hop. Defence in depth on top
// (AEP-0001 §8.2(a); the project rule "capture is the security boundary"): a payload holding a member
// annotated above the event's own declared capture is dishonest and is dropped wholesale too,
// so free text never leaves through a bridge because a sender under-declared it.
import { CAPTURE_TREES, captureRank } from '@aep/protocol';
import type { CaptureLevel, CaptureTree } from '@aep/protocol';
import { diag, isPlainObject } from './result.js';
import type { BridgeDiagnostic } from './result.js';

/** True when some member of `value` is annotated above `rank` (the walk of validateEvent's capture rule). */
function aboveDeclared(value: unknown, tree: CaptureTree, rank: number): boolean {
  if (Array.isArray(value)) {
    const items = tree.items;
    if (items === undefined || (items.properties === undefined && items.items === undefined)) return false;
    for (const v of value) if (aboveDeclared(v, items, rank)) return true;
    return false;
  }
  if (!isPlainObject(value)) return false;
  const props = tree.properties;
  if (props === undefined) return false;
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(props, k)) continue; // unannotated: metadata
    const sub = props[k]!;
    if (sub.level !== 'metadata' && captureRank(sub.level) > rank) return true;
    if ((sub.properties !== undefined || sub.items !== undefined) && aboveDeclared(value[k], sub, rank)) return true;
  }
  return false;
}

/**
 * The payload an exporter with ceiling `max` may carry for `event`: `data` itself when it
 * survives, else `undefined` (with a diagnostic saying why when data was present). `capture`
 * must already be known to be a level (absent = `metadata`).
 */
export function survivingPayload(
  event: Record<string, unknown>,
  capture: CaptureLevel,
  max: CaptureLevel,
  out: BridgeDiagnostic[],
): Record<string, unknown> | undefined {
  const data = event['data'];
  if (!isPlainObject(data)) return undefined;
  const rank = captureRank(capture);
  if (rank === 0) {
    out.push(diag('capture.dishonest', 'data', 'data is present at capture none (AEP-0001 §8.2): not exported'));
    return undefined;
  }
  if (rank > captureRank(max)) {
    out.push(diag('capture.above-max', 'data', `the event's capture ${capture} is above max_capture ${max}: payload not exported`));
    return undefined;
  }
  const type = event['type'];
  if (rank < 3 && typeof type === 'string' && Object.prototype.hasOwnProperty.call(CAPTURE_TREES, type)) {
    if (aboveDeclared(data, CAPTURE_TREES[type]!, rank)) {
      out.push(diag('capture.dishonest', 'data', `a payload member is annotated above the declared capture ${capture}: payload not exported`));
      return undefined;
    }
  }
  return data;
}
