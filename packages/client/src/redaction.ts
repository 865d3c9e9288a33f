// "Redaction before claiming `redacted`" (issue 12 item 1; AEP-0003 §9.4, §9.5; AEP-0001
// §8.2(e)): a sender may label an event `capture:"redacted"` only after running the §9.4
// pipeline on the text it carries. This is the walk every sender built on this SDK uses (the
// emitter connection runs it on every event it sends at `redacted`). Pure and browser-safe.
import { CAPTURE_TREES, redact, redactValue } from '@aep/protocol';
import type { CaptureTree, RedactOptions } from '@aep/protocol';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own<T>(o: Readonly<Record<string, T>> | undefined, k: string): T | undefined {
  return o !== undefined && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined;
}

function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

/**
 * The payload of a `type` event made fit to ride at `capture:"redacted"`, driven by the
 * generated `x-aep-capture` trees (never a hand-written per-type table):
 * - members annotated `full` are removed (they may not appear below `full`, AEP-0001 §8.2);
 * - members annotated `redacted` go through the §9.4 pipeline (`redactValue`: every string, and
 *   credential-named keys whatever their value);
 * - the `[metadata*]` exception members (`prompt`, labels, `answer.values`) go through it too:
 *   at `redacted` they carry real text;
 * - members no tree annotates (vendor extras, unregistered and `x.*` types) go through it as
 *   well: a sender cannot know they are structural, and redacting more is always legal (§9.4);
 * - members annotated `metadata` are kept as they are (identifiers, enums, numbers), their
 *   nested members walked by the same rules.
 * Idempotent (the pipeline is a fixpoint), never mutates its input, returns a new object.
 */
export function redactPayload(type: string, data: Readonly<Record<string, unknown>>, opts: RedactOptions = {}): Record<string, unknown> {
  const tree = own(CAPTURE_TREES, type);
  if (!tree || !tree.properties || Object.keys(tree.properties).length === 0) return redactValue(data, opts) as Record<string, unknown>;
  return walkObject(data, tree, opts);
}

function walkObject(value: Readonly<Record<string, unknown>>, tree: CaptureTree, opts: RedactOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    const child = own(tree.properties, key);
    if (!child) {
      setOwn(out, key, redactValue(v, opts));
      continue;
    }
    if (child.level === 'full') continue;
    if (child.level === 'redacted' || child.exception !== undefined) {
      setOwn(out, key, child.exception === 'prompt' || child.exception === 'label' ? redactText(v, opts) : redactValue(v, opts));
      continue;
    }
    setOwn(out, key, walk(v, child, opts));
  }
  return out;
}

function walk(value: unknown, tree: CaptureTree, opts: RedactOptions): unknown {
  if (Array.isArray(value)) {
    const items = tree.items;
    return items ? value.map((v) => walk(v, items, opts)) : value.map((v) => redactValue(v, opts));
  }
  if (isPlainObject(value)) return tree.properties ? walkObject(value, tree, opts) : redactValue(value, opts);
  return value;
}

/** A `[metadata*]` text member: strings through the pipeline; anything else as `redactValue`. */
function redactText(v: unknown, opts: RedactOptions): unknown {
  return typeof v === 'string' ? redact(v, opts) : redactValue(v, opts);
}
