// The adapter's error table (local family AEP_CC_*, never sent on the wire): code, where it
// surfaces (HTTP status of the daemon's loopback endpoint, exit code of `aep claude-code`, or a
// log line), and what it means. docs/errors.md renders it; test/errors-table.test.ts keeps both in
// step. No imports: the command-hook shim (hook.ts) loads this file too and must stay fast.

/** One row of the table. */
export interface AdapterErrorInfo {
  code: string;
  /** HTTP status on the daemon's loopback endpoint, when the error answers a request there. */
  http?: number;
  /** Exit code of `aep claude-code …` (or the shim), when the error ends a command. */
  exit?: number;
  /** Logged by the daemon (stderr), always with its code. */
  log?: true;
  meaning: string;
}

/** Every adapter error, by short name. */
export const ADAPTER_ERROR_TABLE = {
  HOOK_INVALID: {
    code: 'AEP_CC_HOOK_INVALID',
    http: 400,
    exit: 1,
    log: true,
    meaning: 'the hook body is not a Claude Code hook payload (Claude Code treats the refusal as no decision)',
  },
  HOOK_TOO_LARGE: { code: 'AEP_CC_HOOK_TOO_LARGE', http: 413, log: true, meaning: 'the hook body is over `--max-hook-bytes`; no decision' },
  NOT_FOUND: { code: 'AEP_CC_NOT_FOUND', http: 404, meaning: 'not a daemon path (`POST /hooks/{Event}`, `POST /hook`, `GET /health`)' },
  UNAUTHORIZED: {
    code: 'AEP_CC_UNAUTHORIZED',
    http: 401,
    log: true,
    meaning: 'a hook or health request without the per-install secret (HTTP `Authorization: Bearer`, or the socket handshake)',
  },
  FORBIDDEN_HOST: { code: 'AEP_CC_FORBIDDEN_HOST', http: 403, log: true, meaning: 'the `Host` header is not a loopback name (DNS-rebinding guard)' },
  FORBIDDEN_ORIGIN: {
    code: 'AEP_CC_FORBIDDEN_ORIGIN',
    http: 403,
    log: true,
    meaning: 'the request carries a browser `Origin` header (hooks never come from web pages)',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 'AEP_CC_UNSUPPORTED_MEDIA_TYPE',
    http: 415,
    log: true,
    meaning: 'a hook POST whose content type is not `application/json` (a CORS-simple `text/plain` body is refused)',
  },
  ADDRESS_IN_USE: { code: 'AEP_CC_ADDRESS_IN_USE', exit: 5, meaning: '`serve`: the TCP port is taken, or another daemon answers on the socket' },
  LISTEN_FAILED: {
    code: 'AEP_CC_LISTEN_FAILED',
    exit: 5,
    meaning: '`serve`: the TCP port or the socket path cannot be bound for another reason (permission, bad path)',
  },
  SECRET_UNSAFE: {
    code: 'AEP_CC_SECRET_UNSAFE',
    exit: 2,
    meaning: 'the secret file or its directory is not owned by this user or is group/other-accessible, or cannot be created',
  },
  SOCKET_UNSAFE: {
    code: 'AEP_CC_SOCKET_UNSAFE',
    exit: 2,
    meaning:
      'the socket directory or socket is not owned by this user, is group/other-accessible, or is not a directory/socket (`serve` refuses to start; the shim sends nothing and exits 0 with no decision)',
  },
  DAEMON_UNVERIFIED: {
    code: 'AEP_CC_DAEMON_UNVERIFIED',
    exit: 0,
    meaning: 'the command-hook shim (exits 0): the listener on the socket could not prove it holds the secret; nothing was sent, no decision',
  },
  TOO_MANY_HELD: {
    code: 'AEP_CC_TOO_MANY_HELD',
    log: true,
    meaning: 'a blocking hook over `--max-held`; answered at once with no decision (Claude Code asks in its own dialog)',
  },
  TOO_MANY_QUESTIONS: { code: 'AEP_CC_TOO_MANY_QUESTIONS', log: true, meaning: 'an AskUserQuestion over `--max-questions`; not forwarded, no decision' },
  TOO_MANY_FIELDS: { code: 'AEP_CC_TOO_MANY_FIELDS', log: true, meaning: 'an elicitation over `--max-fields`; not forwarded, no decision' },
  CONFIG_INVALID: { code: 'AEP_CC_CONFIG_INVALID', exit: 2, meaning: 'a capture / override / limit option is invalid' },
  SETTINGS_INVALID: { code: 'AEP_CC_SETTINGS_INVALID', exit: 2, meaning: '`install`/`uninstall`: the settings file is not a JSON object (left untouched)' },
  EMIT_FAILED: { code: 'AEP_CC_EMIT_FAILED', log: true, meaning: 'an event could not be emitted (the hook still answers within its budget)' },
  INTERNAL: { code: 'AEP_CC_INTERNAL', log: true, meaning: 'an unexpected fault; the hook gets no decision (never breaks the agent)' },
} as const satisfies Record<string, AdapterErrorInfo>;

/** Short name -> code, e.g. `ADAPTER_ERRORS.HOOK_INVALID === 'AEP_CC_HOOK_INVALID'`. */
export const ADAPTER_ERRORS = Object.fromEntries(Object.entries(ADAPTER_ERROR_TABLE).map(([k, v]) => [k, v.code])) as {
  readonly [K in keyof typeof ADAPTER_ERROR_TABLE]: (typeof ADAPTER_ERROR_TABLE)[K]['code'];
};

/** A coded adapter error (local family, AEP_CC_*). */
export class AdapterError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'AdapterError';
    this.code = code;
  }
}
