// Defaults shared by the daemon, install and the CLI (kept dependency-free so install and the
// command-hook entry load fast).

/** Default daemon port (issue 6). */
export const DEFAULT_PORT = 8377;
/** Default wait for an answer before handing the question back to the terminal (ms). */
export const DEFAULT_WAIT_MS = 300_000;
/** Default relay URL (the relay's own default port). */
export const DEFAULT_RELAY = 'http://127.0.0.1:8787';
