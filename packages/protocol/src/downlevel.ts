// Capture down-levelling at a mechanical hop (AEP-0001 §8.2(b)/(e); AEP-0003 §6.4; AEP-0006
// Security; AEP-0001 §8.2, AEP-0003 §6.4). Driven by the generated `x-aep-capture` annotation
// trees of the payload schemas, never by a hand-written per-type table.
import { CAPTURE_TREES } from './generated/capture-trees.js';
import type { CaptureTree } from './generated/capture-trees.js';
import type { CaptureLevel } from './levels.js';
import { captureRank } from './levels.js';
import { AepError } from './errors.js';
import { synthesizePrompt } from './attention-request.js';
import { structuralValues } from './gate.js';
import { setOwn } from './redact.js';

const LEVEL_RANK: Readonly<Record<string, number>> = { none: 0, metadata: 1, redacted: 2, full: 3 };
const REDACTED = 2;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

interface Ctx {
  target: number;
  /** Envelope facts used by the prompt synthesis. */
  agent: string;
  subject: string | undefined;
  kind: string;
}

/**
 * Creates a down-leveller over a given set of annotation trees (tests use small fixtures;
 * {@link downlevel} uses the generated {@link CAPTURE_TREES}).
 */
export function createDownleveler(trees: Readonly<Record<string, CaptureTree>>): (event: unknown, ceiling: CaptureLevel) => unknown {
  return (event, ceiling) => downlevelWith(trees, event, ceiling);
}

/**
 * Down-levels `event` to the capture ceiling `ceiling` the way a mechanical hop must
 * (AEP-0001 §8.2, AEP-0003 §6.4):
 * 1. `capture` (absent = `metadata`) at or below the ceiling → the **same object** is returned
 *    (`===`), so a relay can forward the raw bytes;
 * 2. target = ceiling, except a `full` event under a `redacted` ceiling lands on `metadata`
 *    (§8.2(e): a hop never mints the `redacted` provenance claim);
 * 3. a new event with `capture` = target; every other envelope attribute untouched;
 * 4. target `none`, or no `data` → `data` removed;
 * 5. a type without an annotated payload schema (vendor, unregistered, empty-payload) → `data` removed;
 * 6. otherwise every member annotated above the target is removed at any depth (unannotated = `metadata`);
 * 7. below `redacted`, the `[metadata*]` fields are degraded: `prompt` → `"{agent} requests {kind}: {subject}"`,
 *    labels → the item's `id`, `answer.values` → number/boolean entries only.
 * Never mutates its input (the result may share unchanged sub-objects with it: treat both as
 * immutable), never raises capture, idempotent. An event whose `capture` is not a level is
 * treated as `full` (most conservative). A non-object is returned as is. Throws
 * `AepError('AEP_CAPTURE_UNKNOWN')` only for a ceiling that is not one of the four levels.
 */
export function downlevel<T>(event: T, ceiling: CaptureLevel): T {
  return downlevelWith(CAPTURE_TREES, event, ceiling);
}

function downlevelWith<T>(trees: Readonly<Record<string, CaptureTree>>, event: T, ceiling: CaptureLevel): T {
  const c = captureRank(ceiling);
  if (c < 0)
    throw new AepError('AEP_CAPTURE_UNKNOWN', `unknown capture ceiling ${JSON.stringify(ceiling)}: expected none, metadata, redacted or full (AEP-0001 §8.2)`);
  if (!isPlainObject(event)) return event;
  const have = Object.prototype.hasOwnProperty.call(event, 'capture') ? event['capture'] : 'metadata';
  const haveRank = typeof have === 'string' && Object.prototype.hasOwnProperty.call(LEVEL_RANK, have) ? LEVEL_RANK[have]! : 3;
  if (c >= haveRank) return event;
  const targetRank = c === REDACTED && haveRank === 3 ? 1 : c;
  const target = (['none', 'metadata', 'redacted', 'full'] as const)[targetRank]!;

  const out: Record<string, unknown> = { ...event, capture: target };
  const hasData = Object.prototype.hasOwnProperty.call(event, 'data');
  if (targetRank === 0 || !hasData) {
    delete out['data'];
    return out as T;
  }
  const type = event['type'];
  const tree = typeof type === 'string' && Object.prototype.hasOwnProperty.call(trees, type) ? trees[type] : undefined;
  const data = event['data'];
  if (!tree || !tree.properties || Object.keys(tree.properties).length === 0 || !isPlainObject(data)) {
    delete out['data'];
    return out as T;
  }
  const ctx: Ctx = {
    target: targetRank,
    agent: typeof event['agent'] === 'string' ? event['agent'] : 'agent',
    subject: typeof event['subject'] === 'string' ? event['subject'] : undefined,
    kind: typeof data['kind'] === 'string' ? data['kind'] : 'attention',
  };
  out['data'] = prune(data, tree, ctx, -1);
  return out as T;
}

/** Prunes one value against its tree; returns the same reference when nothing changed. */
function prune(value: unknown, tree: CaptureTree, ctx: Ctx, index: number): unknown {
  if (Array.isArray(value)) {
    const itemTree = tree.items;
    if (!itemTree) return value;
    let changed = false;
    const arr = value.map((v, i) => {
      const p = prune(v, itemTree, ctx, i);
      if (p !== v) changed = true;
      return p;
    });
    return changed ? arr : value;
  }
  if (!isPlainObject(value) || !tree.properties) return value;
  const props = tree.properties;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    const child = Object.prototype.hasOwnProperty.call(props, key) ? props[key] : undefined;
    if (!child) {
      setOwn(out, key, v);
      continue;
    } // unannotated (vendor extra): metadata
    if ((LEVEL_RANK[child.level] ?? 3) > ctx.target) {
      changed = true;
      continue;
    }
    let nv: unknown;
    if (child.exception && ctx.target < REDACTED) nv = degrade(child.exception, v, value, ctx, index);
    else nv = prune(v, child, ctx, -1);
    if (nv === undefined) {
      changed = true;
      continue;
    }
    if (nv !== v) changed = true;
    setOwn(out, key, nv);
  }
  return changed ? out : value;
}

/** The structural replacement of a `[metadata*]` member below `redacted` (AEP-0001 §8.2 step 7). */
function degrade(exception: 'prompt' | 'label' | 'values', v: unknown, parent: Record<string, unknown>, ctx: Ctx, index: number): unknown {
  switch (exception) {
    case 'prompt':
      return synthesizePrompt(ctx.agent, ctx.kind, ctx.subject);
    case 'label': {
      const id = parent['id'];
      // The item's own id; an item without a usable id gets its 1-based position (still structural).
      if (typeof id === 'string') return id;
      if (typeof id === 'number' && Number.isFinite(id)) return String(id);
      return index >= 0 ? String(index + 1) : undefined;
    }
    case 'values': {
      if (!isPlainObject(v)) return undefined;
      const kept = structuralValues(v);
      return Object.keys(kept).length === Object.keys(v).length ? v : kept;
    }
    default:
      return undefined;
  }
}
