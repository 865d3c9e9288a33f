/**
 * Error thrown by the few protocol functions that refuse instead of reporting (the emitter-side
 * builder, AEP-0001 §5.4: an illegal extension attribute must be refused, nothing emitted).
 * `code` is stable (`AEP_*`), the message names the rule.
 */
export class AepError extends Error {
  /** Stable error code, e.g. `AEP_EXT_INVALID`. */
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'AepError';
    this.code = code;
  }
}
