// The envelope facts the OTLP and OCSF projections read (AEP-0001 §5.1), checked once. The
// projections need the required attributes as strings and an RFC 3339 `time`; they do not
// re-validate the whole envelope (callers at the edge run `validateEnvelope` of @aep/protocol).
import { isCaptureLevel, isSeverity } from '@aep/protocol';
import type { CaptureLevel, Severity } from '@aep/protocol';
import { fail, isPlainObject } from './result.js';
import type { BridgeResult } from './result.js';
import { rfc3339ToEpochTime } from './time.js';
import type { EpochTime } from './time.js';

/** What both projections need from an event, defaults applied (AEP-0001 §5.1). */
export interface EnvelopeFacts {
  event: Record<string, unknown>;
  id: string;
  type: string;
  time: string;
  source: string;
  agent: string;
  /** The instant of `time`, exact. */
  instant: EpochTime;
  severity: Severity;
  capture: CaptureLevel;
}

const REQUIRED = ['id', 'type', 'time', 'source', 'agent'] as const;

/** Reads and checks the envelope facts, or says which rule the event breaks. */
export function readEnvelope(event: unknown): BridgeResult<EnvelopeFacts> {
  if (!isPlainObject(event)) return fail('AEP_BRIDGE_EVENT_INVALID', 'event.not-object', 'the input is not a JSON object');
  for (const k of REQUIRED) {
    const v = event[k];
    if (typeof v !== 'string' || v === '') return fail('AEP_BRIDGE_EVENT_INVALID', 'event.required', `${k} is missing or not a non-empty string`, k);
  }
  const time = event['time'] as string;
  const instant = rfc3339ToEpochTime(time);
  if (instant === null) return fail('AEP_BRIDGE_EVENT_INVALID', 'event.time', 'time is not an RFC 3339 date-time with an offset', 'time');
  const sev = event['severity'];
  if (sev !== undefined && !isSeverity(sev)) return fail('AEP_BRIDGE_EVENT_INVALID', 'event.severity', 'severity is not one of the six levels', 'severity');
  const cap = event['capture'];
  if (cap !== undefined && !isCaptureLevel(cap)) return fail('AEP_BRIDGE_EVENT_INVALID', 'event.capture', 'capture is not one of the four levels', 'capture');
  const data = event['data'];
  if (data !== undefined && !isPlainObject(data)) return fail('AEP_BRIDGE_EVENT_INVALID', 'event.data', 'data is not a JSON object', 'data');
  return {
    ok: true,
    diagnostics: [],
    value: {
      event,
      id: event['id'] as string,
      type: event['type'] as string,
      time,
      source: event['source'] as string,
      agent: event['agent'] as string,
      instant,
      severity: (sev ?? 'info') as Severity,
      capture: (cap ?? 'metadata') as CaptureLevel,
    },
  };
}
