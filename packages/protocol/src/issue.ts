/**
 * One problem found by a validator. Validators return lists of these and never throw
 * (docs/conventions.md §3). `rule` is a stable id from the rule table (`RULES`, docs/rules.md);
 * `path` is a JSON pointer into the event (or form values); `section` cites the spec.
 */
export interface Issue {
  /** Stable rule id, e.g. `envelope.seq-forbidden`. */
  rule: string;
  /** JSON pointer of the offending member (`""` for the whole event). */
  path: string;
  /** Human-readable message naming the rule broken. */
  message: string;
  /** Spec section, e.g. `AEP-0001 §5.2`. */
  section: string;
  /** Index of the event in a stream (stream validation only). */
  index?: number;
}
