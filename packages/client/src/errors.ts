// The client's error table (docs/conventions.md §5: one catalogue per package, as code). Local errors,
// never sent on the wire. `test/client-errors.test.ts` checks every row against the "Client SDK"
// table of docs/errors.md, meaning for meaning.

/** Every `ClientError` code and what it means. */
export const CLIENT_ERRORS = {
  AEP_CLIENT_OPTION: 'a required option is missing or invalid',
  AEP_CLIENT_UNREACHABLE: 'the relay cannot be reached, or did not complete `hello` (or answer) in time',
  AEP_CLIENT_REFUSED:
    'the relay refused the credentials: HTTP 401 (missing or wrong token), 403 (the token may not do this) or an `unauthorized` answer to a `subscribe`; `status` holds the HTTP status; never retried',
  AEP_CLIENT_HELLO: 'the relay refused the `hello` (an `error` frame such as `version-unsupported` before its `hello` reply)',
  AEP_CLIENT_HTTP:
    'the relay refused a request for another reason (an HTTP error status, or a `subscribe` answered with an `error` frame; `wireCode` holds its code), or sent something malformed',
  AEP_CLIENT_CLOSED: 'used after `close()`, or the connection closed before the operation completed',
} as const;

/** A stable client error code. */
export type ClientErrorCode = keyof typeof CLIENT_ERRORS;

/** Extra facts of a {@link ClientError}. */
export interface ClientErrorDetails {
  /** HTTP status of a refused request or upgrade. */
  status?: number;
  /** The relay's wire error code (`error` frame `code` or HTTP body `error`). */
  wireCode?: string;
}

/** Local SDK error: a stable `AEP_CLIENT_*` code (see {@link CLIENT_ERRORS}) and a message naming the cause. */
export class ClientError extends Error {
  readonly code: ClientErrorCode;
  /** HTTP status, for `AEP_CLIENT_REFUSED` and `AEP_CLIENT_HTTP` from an HTTP answer. */
  readonly status: number | undefined;
  /** The relay's wire code, when it sent one. */
  readonly wireCode: string | undefined;
  constructor(code: ClientErrorCode, message: string, details: ClientErrorDetails = {}) {
    super(message);
    this.name = 'ClientError';
    this.code = code;
    this.status = details.status;
    this.wireCode = details.wireCode;
  }
}

/** True for HTTP statuses that mean "these credentials may not do this" (never retried, issue 14). */
export function isRefusalStatus(status: number): boolean {
  return status === 401 || status === 403;
}

/** The error of a refused credential (401/403), with a hint a person can act on. */
export function refusedError(what: string, status: number): ClientError {
  const hint = status === 401 ? 'the token is missing or wrong' : 'the token may not do this';
  return new ClientError('AEP_CLIENT_REFUSED', `${what}: HTTP ${status} (${hint})`, { status });
}
