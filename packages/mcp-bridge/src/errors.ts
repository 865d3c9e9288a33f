// The bridge's error tables (issue 13 item 4: error tables as code, checked against
// docs/errors.md by test/errors.test.ts). Two vocabularies: local `AEP_MCP_*` codes of
// `aep mcp wrap` (never on the wire; the CLI exits with the given status), and the JSON-RPC
// errors the bridge itself answers MCP peers with (every other JSON-RPC error is the server's
// or the host's own, forwarded unchanged).

/** Local errors of `aep mcp wrap` ({@link BridgeError}), with the CLI exit status (docs/cli.md). */
export const BRIDGE_ERRORS = {
  AEP_MCP_SPAWN: { exit: 5, when: 'the wrapped MCP server command cannot be started' },
} as const;

/** A local error code of the bridge. */
export type BridgeErrorCode = keyof typeof BRIDGE_ERRORS;

/** JSON-RPC errors the bridge sends itself, by code (README "Outcome mapping", "Steering"). */
export const BRIDGE_JSONRPC_ERRORS = {
  /** MCP/SDK `InvalidParams`: an `elicitation/create` the MCP schema rejects, when the host cannot take it. */
  invalidElicitation: {
    code: -32602,
    to: 'server',
    when: 'its elicitation/create does not match the MCP ElicitRequest schema (or is task-augmented) and the host cannot take it',
  },
  /** LSP `RequestCancelled` (MCP defines none): a host request a person cancelled through AEP. */
  requestCancelled: { code: -32800, to: 'host', when: 'a person cancelled its request in flight through AEP (control.cancel)' },
} as const;

/** Local error of the bridge (never on the wire). Codes and exit statuses: {@link BRIDGE_ERRORS}. */
export class BridgeError extends Error {
  readonly code: BridgeErrorCode;
  /** The CLI exit status for this error. */
  readonly exit: number;
  constructor(code: BridgeErrorCode, message: string) {
    super(message);
    this.name = 'BridgeError';
    this.code = code;
    this.exit = BRIDGE_ERRORS[code].exit;
  }
}
