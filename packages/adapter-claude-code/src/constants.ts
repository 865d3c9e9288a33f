// Defaults shared by the daemon, install and the CLI (kept dependency-free so install and the
// command-hook entry load fast).

/** Default daemon port (issue 6). */
export const DEFAULT_PORT = 8377;
/** Default wait for an answer before handing the question back to the terminal (ms). */
export const DEFAULT_WAIT_MS = 300_000;
/** Default relay URL (the relay's own default port). */
export const DEFAULT_RELAY = 'http://127.0.0.1:8787';

/**
 * Default limits of the daemon (issue 11 item 5): beyond one, a hook gets no decision at once
 * (Claude Code asks in its own dialog) and the refusal is logged with its code.
 */
export const DEFAULT_LIMITS = {
  /** Blocking hooks held open at once (each holds a connection and a pending request). */
  maxHeld: 64,
  /** Questions of one AskUserQuestion form (Claude Code itself asks 1 to 4). */
  maxQuestions: 16,
  /** Fields of one MCP elicitation form. */
  maxFields: 64,
  /** Bytes of one hook body. */
  maxHookBytes: 1024 * 1024,
} as const;
