/**
 * Local SDK error (never sent on the wire): stable `AEP_CLIENT_*` code plus a message.
 * Codes: AEP_CLIENT_UNREACHABLE, AEP_CLIENT_CLOSED, AEP_CLIENT_HELLO, AEP_CLIENT_HTTP, AEP_CLIENT_OPTION.
 */
export class ClientError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ClientError';
    this.code = code;
  }
}
