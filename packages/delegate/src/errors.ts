// Local errors of the policy delegate (`AEP_DELEGATE_*`, docs/errors.md). Never sent on the wire.

/** Stable codes of the delegate and of `aep delegate`, with the exit status the CLI gives each (rows of docs/errors.md). */
export const DELEGATE_ERRORS = {
  AEP_DELEGATE_POLICY: { exit: 1, meaning: 'the policy file breaks the schema (the message names the line and the path)' },
  AEP_DELEGATE_CEDAR: { exit: 1, meaning: 'the Cedar engine could not load or parse the policies (the message names the line)' },
  AEP_DELEGATE_POLICY_READ: { exit: 2, meaning: 'the policy file (or the Cedar file it names) cannot be read' },
  AEP_DELEGATE_STATE: { exit: 2, meaning: 'the state directory, decision log or grants file cannot be created, read or written' },
  AEP_DELEGATE_OPTION: { exit: 2, meaning: 'an option of `aep delegate` is missing or malformed (e.g. no --policy, an unreadable --token-file)' },
  AEP_DELEGATE_NOT_FOUND: { exit: 2, meaning: '`explain`: the decision log has no entry for that request' },
  AEP_DELEGATE_INCOMPLETE: { exit: 2, meaning: '`grant`: the complete approval text of the request is not in hand, or it names no tool' },
  AEP_DELEGATE_NO_DELEGATE: { exit: 2, meaning: "no live delegate (or more than one) in the relay's roster: name it with --delegate-session" },
  AEP_DELEGATE_REFUSED: {
    exit: 3,
    meaning: 'the delegate rejected the command (e.g. a grant beyond max_ttl), or the relay refused it (no-route, unauthorized)',
  },
  AEP_DELEGATE_NO_ACK: { exit: 4, meaning: 'no acknowledgement from the delegate within the ack window' },
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
