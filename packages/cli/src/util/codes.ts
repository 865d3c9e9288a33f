import { EXIT, type ExitCode } from './exit.js';

/** One row of the CLI error table: the exit status the code always gives, and what it means. */
export interface CliErrorInfo {
  /** Exit status when the code ends the command; `undefined` for codes only reported per input line. */
  readonly exit: ExitCode | undefined;
  /** Also reported per input line (JSONL commands go on, and exit 1 at the end). */
  readonly perLine?: true;
  /** The meaning, exactly as in the "When" column of docs/errors.md. */
  readonly meaning: string;
}

/**
 * Every `AEP_CLI_*` code: one fault, one code, one exit status (issue 13). `CliError` takes its
 * exit status from here, so a code cannot exit differently in two commands. Checked row for row
 * against docs/errors.md by test/exit-codes.test.ts; add a code here and there together.
 */
export const CLI_ERRORS = {
  AEP_CLI_USAGE: { exit: EXIT.USAGE, meaning: 'wrong combination of arguments (e.g. two answers to `respond`, no server command for `mcp wrap`)' },
  AEP_CLI_BAD_OPTION: { exit: EXIT.USAGE, meaning: 'an option value is out of range or malformed; the message names the option' },
  AEP_CLI_BAD_CEILING: { exit: EXIT.USAGE, meaning: '`--ceiling`/`--capture` is not one of none, metadata, redacted, full' },
  AEP_CLI_BAD_FILTER: { exit: EXIT.USAGE, meaning: '`--filter` is not JSON or breaks an attr-match rule (named)' },
  AEP_CLI_BAD_JSON: { exit: EXIT.USAGE, perLine: true, meaning: 'a JSONL line (or the stdin document) is not JSON' },
  AEP_CLI_NOT_AN_OBJECT: { exit: undefined, perLine: true, meaning: 'a JSONL line is JSON but not an object' },
  AEP_CLI_BAD_INPUT: { exit: EXIT.USAGE, meaning: 'stdin has the wrong shape for the command' },
  AEP_CLI_BAD_VALUES: { exit: EXIT.USAGE, meaning: '`respond --values` is not valid JSON' },
  AEP_CLI_BAD_RELAY: { exit: EXIT.USAGE, meaning: '`--relay` is not an http(s) URL' },
  AEP_CLI_UNREADABLE: { exit: EXIT.USAGE, meaning: 'an input file (or `--token-file`, `--token-fd`) cannot be read' },
  AEP_CLI_UNKNOWN_REQUEST: { exit: EXIT.USAGE, meaning: '`respond`/`answer`: the relay holds no such attention request' },
  AEP_CLI_UNKNOWN_TOKEN: { exit: EXIT.USAGE, meaning: '`aep token revoke`: the relay holds no token with that id' },
  AEP_CLI_OUT_OF_BAND: { exit: EXIT.USAGE, meaning: 'the request declares `respond_via` without `control` (AEP-0008)' },
  AEP_CLI_AGENT_OFFLINE: {
    exit: EXIT.REJECTED,
    meaning: "`aep answer`, `aep respond`: the relay lists the request's agent as offline (contract C4 roster `offline`); nothing reached the agent",
  },
  AEP_CLI_NOT_A_TTY: { exit: EXIT.USAGE, meaning: '`aep answer` without a terminal: use `aep respond`' },
  AEP_CLI_CANCELLED: { exit: EXIT.USAGE, meaning: 'the interactive prompt was cancelled' },
  AEP_CLI_CAPTURE_TOO_LOW: { exit: EXIT.USAGE, meaning: '`--capture` is below what the command carries (free text at `metadata` or `none`)' },
  AEP_CLI_APPROVAL_UNSEEN: {
    exit: EXIT.USAGE,
    meaning: 'allowing a permission request needs `--digest D`, the approval digest printed under the complete text by `respond --show` or `inbox`',
  },
  AEP_CLI_APPROVAL_CHANGED: {
    exit: EXIT.REJECTED,
    meaning: '`--digest` is not the approval digest of this request: the text you read is not the one this request would run',
  },
  AEP_CLI_APPROVAL_INCOMPLETE: {
    exit: EXIT.REJECTED,
    meaning:
      "the complete approval text does not reach this terminal (capture level, redaction, or no `approvaldigest`): Allow is refused; deny, or answer on the agent's machine",
  },
  AEP_CLI_RELAY_UNREACHABLE: { exit: EXIT.UNAVAILABLE, meaning: 'the relay cannot be reached' },
  AEP_CLI_RELAY_REFUSED: { exit: EXIT.REJECTED, meaning: 'the relay refused the credentials (wrong token: HTTP 401, missing scope: 403), in every command' },
  AEP_CLI_LISTEN_FAILED: { exit: EXIT.UNAVAILABLE, meaning: '`aep up`/`aep relay` cannot listen on the host/port (in use, not permitted, no such address)' },
  AEP_CLI_RELAY_START_FAILED: {
    exit: EXIT.UNAVAILABLE,
    meaning: 'the relay could not start (e.g. another relay holds the store: the message names its pid and URL)',
  },
  AEP_CLI_STATE_DIR: { exit: EXIT.USAGE, meaning: '`aep up` cannot keep its token in the state directory' },
  AEP_CLI_INTERNAL: { exit: EXIT.INTERNAL, meaning: 'an unexpected fault inside aep (a bug, not a usage error); `AEP_DEBUG=1` prints the stack' },
} as const satisfies Record<string, CliErrorInfo>;

export type CliErrorCode = keyof typeof CLI_ERRORS;

/** The table row of a code, by own property only (a code is never looked up on the prototype). */
export function cliErrorInfo(code: string): CliErrorInfo | undefined {
  return Object.prototype.hasOwnProperty.call(CLI_ERRORS, code) ? (CLI_ERRORS as Record<string, CliErrorInfo>)[code] : undefined;
}

/** The "Exit" column of docs/errors.md for a row. */
export function exitColumn(info: CliErrorInfo): string {
  if (info.perLine) return info.exit === undefined ? `${EXIT.INVALID} (per line)` : `${EXIT.INVALID} (per line) / ${info.exit}`;
  return String(info.exit);
}
