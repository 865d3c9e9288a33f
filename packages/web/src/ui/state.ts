// Per-request UI state that outlives a view (drafts, last outcome), so moving between requests
// never loses what the person typed. Module-level: one inbox per tab.
import type { FormDraft, ShownIssue } from '../form.js';

/** What the last submission of a request led to. */
export type Phase =
  | { kind: 'idle' }
  | { kind: 'sending'; commandId: string }
  | { kind: 'accepted'; commandId: string }
  | { kind: 'rejected'; commandId: string; reason: string; detail?: string; issues: ShownIssue[] }
  | { kind: 'refused'; commandId: string; code: string; detail?: string }
  | { kind: 'timeout'; commandId: string }
  | { kind: 'error'; detail: string };

/** UI state of one request. */
export interface RequestUi {
  draft: FormDraft;
  reason: string;
  text: string;
  phase: Phase;
  /** Set after a submit attempt: from then on local check results are shown next to fields. */
  tried: boolean;
  commands: string[];
  /** The person asked to see every line of a collapsed approval text ("show all N lines"). */
  expanded: boolean;
}

const states = new Map<string, RequestUi>();

/** Get (creating) the UI state of a request by its store key. */
export function uiFor(key: string): RequestUi {
  let s = states.get(key);
  if (!s) {
    s = { draft: {}, reason: '', text: '', phase: { kind: 'idle' }, tried: false, commands: [], expanded: false };
    states.set(key, s);
  }
  return s;
}

const listeners = new Map<string, Set<() => void>>();

/** Listen to changes of one request's UI state; returns the unsubscribe function. */
export function watchUi(key: string, fn: () => void): () => void {
  let set = listeners.get(key);
  if (!set) {
    set = new Set();
    listeners.set(key, set);
  }
  set.add(fn);
  return () => {
    set.delete(fn);
  };
}

/** Change a request's UI state and re-render every view showing it. */
export function updateUi(key: string, patch: Partial<RequestUi>): void {
  Object.assign(uiFor(key), patch);
  for (const fn of listeners.get(key) ?? []) fn();
}
