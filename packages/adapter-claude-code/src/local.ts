// Where the local channel lives and how its secret is kept (docs/security.md §6): the
// per-install secret in `$XDG_CONFIG_HOME/aep/claude-code/hook-secret` (directory 0700, file
// 0600), the daemon's socket in `$XDG_RUNTIME_DIR/aep/` else `~/.local/state/aep/run/` (0700).
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { ADAPTER_ERRORS, AdapterError } from './errors.js';
import { privatePathProblem } from './private-path.js';

/** An absolute XDG base directory from the environment, else undefined (relative ones are ignored, per the XDG spec). */
function xdg(name: string): string | undefined {
  const v = process.env[name];
  return v && isAbsolute(v) ? v : undefined;
}

/** Default secret file: `$XDG_CONFIG_HOME/aep/claude-code/hook-secret`, else `~/.config/aep/claude-code/hook-secret`. */
export function defaultSecretPath(): string {
  return join(xdg('XDG_CONFIG_HOME') ?? join(homedir(), '.config'), 'aep', 'claude-code', 'hook-secret');
}

/** Default socket: `$XDG_RUNTIME_DIR/aep/claude-code.sock`, else `~/.local/state/aep/run/claude-code.sock`. */
export function defaultSocketPath(): string {
  const run = xdg('XDG_RUNTIME_DIR');
  return run ? join(run, 'aep', 'claude-code.sock') : join(homedir(), '.local', 'state', 'aep', 'run', 'claude-code.sock');
}

/**
 * Makes `dir` a private directory of this user: created with mode 0700 when missing; an existing
 * one of ours that is too open is tightened to 0700; one of another user (or a symlink) is refused.
 */
export function ensurePrivateDir(dir: string, code: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new AdapterError(code, `cannot create ${dir}: ${(err as Error).message}`);
  }
  let problem = privatePathProblem(dir, 'dir');
  if (problem && /accessible to group or other/.test(problem)) {
    try {
      chmodSync(dir, 0o700);
    } catch {
      /* reported below */
    }
    problem = privatePathProblem(dir, 'dir');
  }
  if (problem) throw new AdapterError(code, problem);
}

const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;

/** Reads the secret file, refusing one that is not private to this user or malformed. */
export function readSecret(path: string): string {
  const problem = privatePathProblem(path, 'file') ?? privatePathProblem(dirname(path), 'dir');
  if (problem) throw new AdapterError(ADAPTER_ERRORS.SECRET_UNSAFE, `hook secret: ${problem}`);
  const text = readFileSync(path, 'utf8').trim();
  if (!SECRET_RE.test(text))
    throw new AdapterError(
      ADAPTER_ERRORS.SECRET_UNSAFE,
      `hook secret ${path} is not a 43-character base64url secret (delete it; install or serve makes a new one)`,
    );
  return text;
}

/**
 * The per-install secret: read when present, else created (32 random bytes, base64url; file
 * 0600 created exclusively, directory 0700). Throws `AEP_CC_SECRET_UNSAFE`.
 */
export function ensureSecret(path: string): { secret: string; created: boolean } {
  ensurePrivateDir(dirname(path), ADAPTER_ERRORS.SECRET_UNSAFE);
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return { secret: readSecret(path), created: false };
    throw new AdapterError(ADAPTER_ERRORS.SECRET_UNSAFE, `cannot create the hook secret ${path}: ${(err as Error).message}`);
  }
  const secret = randomBytes(32).toString('base64url');
  try {
    writeSync(fd, `${secret}\n`);
  } finally {
    closeSync(fd);
  }
  return { secret: readSecret(path), created: true };
}
