// Local errors of the policy delegate (`AEP_DELEGATE_*`, docs/errors.md). Never sent on the wire.

/** Stable codes of the delegate, with what each means (rows of docs/errors.md). */
export const DELEGATE_ERRORS = {
  AEP_DELEGATE_POLICY: 'the policy file breaks the schema (the message names the line and the path)',
  AEP_DELEGATE_POLICY_READ: 'the policy file (or the Cedar file it names) cannot be read',
  AEP_DELEGATE_CEDAR: 'the Cedar engine could not load or parse the policies',
  AEP_DELEGATE_STATE: 'the state directory, decision log or grants file cannot be created or written',
  AEP_DELEGATE_NOT_FOUND: 'explain: the decision log has no entry for that request',
  AEP_DELEGATE_GRANT: 'a grant was refused (digest does not match the text, expiry beyond max_ttl, missing agent or tool)',
  AEP_DELEGATE_OPTION: 'an option of the delegate runtime is out of range',
} as const;

export type DelegateErrorCode = keyof typeof DELEGATE_ERRORS;

/** An error of the delegate with a stable code; `line`/`path` locate a policy error. */
export class DelegateError extends Error {
  readonly code: DelegateErrorCode;
  readonly line: number | undefined;
  readonly path: string | undefined;
  constructor(code: DelegateErrorCode, message: string, where: { line?: number; path?: string } = {}) {
    super(message);
    this.name = 'DelegateError';
    this.code = code;
    this.line = where.line;
    this.path = where.path;
  }
}
