// Generators for the capture-enforcement property tests: random Events whose every string is a
// canary naming the level its member is annotated at ("Cmetadata-", "Credacted-", "Cfull-") or
// "CU-" for members no schema annotates, with a random declared capture (lying or not).
import fc from 'fast-check';
import { CAPTURE_TREES, type CaptureTree } from '@aep/protocol';

export const LEVELS = ['none', 'metadata', 'redacted', 'full'] as const;
export type Level = (typeof LEVELS)[number];
export const rank = (l: Level | undefined): number => (l === undefined ? 3 : LEVELS.indexOf(l));

const TYPES = [
  'run.started',
  'tool.completed',
  'tool.requested',
  'attention.requested',
  'attention.answered',
  'progress.status',
  'control.rejected',
  'session.started',
  'resource.retrieval.returned',
  'x.acme.tool.done',
  'control.accepted',
] as const;

// Arbitraries are built once (building a stringMatching arbitrary per sample is what is slow).
const WORD = fc.stringMatching(/^[a-z0-9]{1,6}$/);
const KEY = fc.stringMatching(/^[a-z]{1,4}$/);
const leaves = new Map<string, fc.Arbitrary<unknown>>();

/** A value for a member annotated at `level` (or unannotated). */
function leaf(tag: string): fc.Arbitrary<unknown> {
  let a = leaves.get(tag);
  if (!a) {
    a = fc.oneof(
      WORD.map((s) => `${tag}-${s}`),
      fc.integer({ min: 0, max: 1000 }),
      fc.boolean(),
    );
    leaves.set(tag, a);
  }
  return a;
}

function canaryTag(t: CaptureTree): string {
  // An exception member carries text the relay cannot tell from structure below `redacted`:
  // it counts at its annotated level (metadata) here, as the brief does.
  return `C${t.level}`;
}

/** Data for a tree, every string a canary of its member's level, plus unannotated extras. */
function dataFor(t: CaptureTree, depth: number): fc.Arbitrary<unknown> {
  if (t.exception === 'values') {
    return fc.dictionary(
      KEY,
      fc.oneof(
        fc.integer(),
        fc.boolean(),
        WORD.map((s) => `Credacted-${s}`),
      ),
      { maxKeys: 3 },
    );
  }
  if (t.items && depth < 4) return fc.array(dataFor(t.items, depth + 1), { maxLength: 3 });
  if (t.properties && depth < 4) {
    const entries = Object.entries(t.properties).map(([k, child]) => [k, fc.option(dataFor(child, depth + 1), { nil: undefined, freq: 3 })] as const);
    const rec: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(entries);
    rec['xextra'] = fc.option(leaf('CU'), { nil: undefined, freq: 2 });
    return fc.record(rec).map((o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)));
  }
  if (t.properties || t.items) return leaf('CU').map(() => ({}));
  return leaf(canaryTag(t));
}

const dataArbs = new Map<string, fc.Arbitrary<unknown>>();
function dataOf(type: string): fc.Arbitrary<unknown> {
  let a = dataArbs.get(type);
  if (!a) {
    const tree = CAPTURE_TREES[type];
    a = fc.option(tree ? dataFor(tree, 0) : fc.record({ a: leaf('CU'), b: leaf('CU') }), { nil: undefined, freq: 6 });
    dataArbs.set(type, a);
  }
  return a;
}

let n = 0;
/** One random Event of session `session` at seq `seq`. */
export function eventArb(session: string): fc.Arbitrary<{ ev: Record<string, unknown>; declared: Level }> {
  return fc
    .record({
      type: fc.constantFrom(...TYPES),
      capture: fc.option(fc.constantFrom(...LEVELS), { nil: undefined }),
      severity: fc.constantFrom('info', 'notice', 'warning'),
    })
    .chain(({ type, capture, severity }) => {
      return dataOf(type).map((d) => {
        const id = `01PROP${(n++).toString().padStart(8, '0')}${Math.random().toString(36).slice(2, 14).toUpperCase()}`.slice(0, 26);
        const ev: Record<string, unknown> = {
          aep: '0.1',
          id,
          type,
          time: '2026-01-01T00:00:00Z',
          source: `aep://prop/agent/p/session/${session}`,
          agent: 'p',
          session,
          seq: 0,
          severity,
        };
        if (type === 'attention.answered' || type === 'control.rejected') ev['subject'] = 'q1';
        if (type === 'attention.requested') ev['subject'] = 'q1';
        if (capture !== undefined) ev['capture'] = capture;
        if (d !== undefined && typeof d === 'object' && d !== null) ev['data'] = d;
        return { ev, declared: capture ?? 'metadata' };
      });
    });
}

/** Canary tags that must not appear in text delivered under `ceiling` for an Event declared `declared`. */
export function forbiddenTags(declared: Level, ceiling: Level | undefined): string[] {
  const allowed = Math.min(rank(declared), rank(ceiling));
  const out: string[] = [];
  for (const l of ['metadata', 'redacted', 'full'] as const) if (rank(l) > allowed) out.push(`C${l}-`);
  if (rank(ceiling) < 3) out.push('CU-');
  return out;
}
