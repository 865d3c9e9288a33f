// `aep claude-code install` / `uninstall`: merge our hook handlers into a Claude Code settings
// file (docs/integrations.md §1 "Configuration") without disturbing existing hooks, idempotently, and
// restore the file byte-identically on uninstall (a backup of the original bytes is kept next to
// the settings file while installed). Install also creates the per-install hook secret (0600 in a
// 0700 directory, local.ts); the default handlers are command hooks running the shim (hook.ts),
// which talks to the daemon over its private Unix socket (docs/security.md §6).
import { existsSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { ADAPTER_ERRORS, AdapterError } from './errors.js';
import { DEFAULT_PORT } from './constants.js';
import { defaultSecretPath, defaultSocketPath, ensureSecret } from './local.js';

/** Where the settings live (docs/integrations.md §1). */
export type SettingsScope = 'user' | 'project' | 'local';

/** Hooks that may wait for a human answer (their timeout must exceed the daemon's wait). */
export const BLOCKING_HOOKS = ['PreToolUse', 'PermissionRequest', 'Elicitation'] as const;
/** Lifecycle hooks: answered at once. */
export const LIFECYCLE_HOOKS = [
  'SessionStart',
  'SessionEnd',
  'UserPromptSubmit',
  'Stop',
  'SubagentStart',
  'SubagentStop',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionDenied',
  'Notification',
  'PreCompact',
  'PostCompact',
  'ElicitationResult',
] as const;
/** Hooks whose matcher is a tool name (we match every tool). */
const TOOL_MATCHED = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);

/** Default daemon URL the hooks point at. */
export const DEFAULT_DAEMON_URL = `http://127.0.0.1:${DEFAULT_PORT}`;
/** Default timeout (seconds) of blocking hooks: above the daemon's default 300 s wait. */
export const DEFAULT_BLOCKING_TIMEOUT_S = 330;
/** Default timeout (seconds) of lifecycle hooks. */
export const DEFAULT_LIFECYCLE_TIMEOUT_S = 10;

/** Options of the install functions. */
export interface InstallOptions {
  scope?: SettingsScope;
  /** Explicit settings file (overrides scope). */
  settingsPath?: string;
  /** Project directory for `project`/`local` scopes; default the current directory. */
  projectDir?: string;
  /** Daemon base URL of `http` handlers; default http://127.0.0.1:8377. */
  url?: string;
  /** `command` handlers running the shim over the daemon's socket (default), or `http` handlers. */
  handler?: 'http' | 'command';
  /** Command line that starts the shim (handler `command`); default `aep-claude-hook`. */
  hookCommand?: string;
  /** The daemon's socket (handler `command`); default as `serve`'s. */
  socketPath?: string;
  /** The per-install secret file; default `$XDG_CONFIG_HOME/aep/claude-code/hook-secret`. */
  secretPath?: string;
  blockingTimeoutS?: number;
  lifecycleTimeoutS?: number;
}

/** Result of an install/uninstall. */
export interface InstallResult {
  path: string;
  /** What happened: `installed`, `already-installed`, `restored` (byte-identical), `removed` (entries removed, formatting re-serialized), `not-installed`. */
  status: 'installed' | 'already-installed' | 'restored' | 'removed' | 'not-installed';
}

/** The settings file of a scope. */
export function settingsPathFor(opts: InstallOptions): string {
  if (opts.settingsPath) return opts.settingsPath;
  const dir = opts.projectDir ?? process.cwd();
  switch (opts.scope ?? 'user') {
    case 'user':
      return join(homedir(), '.claude', 'settings.json');
    case 'project':
      return join(dir, '.claude', 'settings.json');
    case 'local':
      return join(dir, '.claude', 'settings.local.json');
  }
}

/** The backup file kept while installed. */
export function backupPathFor(settingsPath: string): string {
  return `${settingsPath}.aep-backup.json`;
}

function trimUrl(u: string): string {
  return u.replace(/\/+$/, '');
}

/** POSIX shell quoting (Claude Code runs command hooks through a shell). */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Environment variable an `http` handler interpolates the secret from (Claude Code `allowedEnvVars`). */
export const HOOK_SECRET_ENV = 'AEP_CC_HOOK_SECRET';

/** One of our handlers for a hook event. */
function handlerFor(event: string, opts: InstallOptions): Record<string, unknown> {
  const timeout = (BLOCKING_HOOKS as readonly string[]).includes(event)
    ? (opts.blockingTimeoutS ?? DEFAULT_BLOCKING_TIMEOUT_S)
    : (opts.lifecycleTimeoutS ?? DEFAULT_LIFECYCLE_TIMEOUT_S);
  if ((opts.handler ?? 'command') === 'command') {
    const cmd = opts.hookCommand ?? 'aep-claude-hook';
    const socket = shellQuote(opts.socketPath ?? defaultSocketPath());
    const secret = shellQuote(opts.secretPath ?? defaultSecretPath());
    return { type: 'command', command: `${cmd} --socket ${socket} --secret-file ${secret} --timeout-ms ${timeout * 1000}`, timeout };
  }
  // HTTP handlers present the secret from the environment (Claude Code >= 2.1.63 `headers` with
  // `allowedEnvVars`); weaker than the socket: a process squatting the port would get it.
  const base = trimUrl(opts.url ?? DEFAULT_DAEMON_URL);
  return { type: 'http', url: `${base}/hooks/${event}`, timeout, headers: { Authorization: `Bearer $${HOOK_SECRET_ENV}` }, allowedEnvVars: [HOOK_SECRET_ENV] };
}

/** The `{"hooks": …}` snippet we merge (also what `--print` shows). */
export function hookSnippet(opts: InstallOptions = {}): { hooks: Record<string, Record<string, unknown>[]> } {
  const hooks: Record<string, Record<string, unknown>[]> = {};
  for (const event of [...BLOCKING_HOOKS, ...LIFECYCLE_HOOKS]) {
    const group: Record<string, unknown> = {};
    if (TOOL_MATCHED.has(event)) group['matcher'] = '*';
    group['hooks'] = [handlerFor(event, opts)];
    hooks[event] = [group];
  }
  return { hooks };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** True for a handler we installed: our `/hooks/{Event}` URL, or our hook command. */
export function isOurHandler(h: unknown): boolean {
  if (!isObject(h)) return false;
  if (h['type'] === 'http' && typeof h['url'] === 'string')
    return /\/hooks\/[A-Za-z]+$/.test(h['url']) && /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\//.test(h['url']);
  if (h['type'] === 'command' && typeof h['command'] === 'string')
    return /(^|[\s/])aep-claude-hook(\.js)?(\s|$)|adapter-claude-code\/dist\/hook\.js/.test(h['command']);
  return false;
}

function readSettings(path: string): { text: string | undefined; value: Record<string, unknown> } {
  if (!existsSync(path)) return { text: undefined, value: {} };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new AdapterError(ADAPTER_ERRORS.SETTINGS_INVALID, `cannot read ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (text.trim() === '') return { text, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new AdapterError(ADAPTER_ERRORS.SETTINGS_INVALID, `${path} is not valid JSON; fix it first (nothing was changed)`);
  }
  if (!isObject(value)) throw new AdapterError(ADAPTER_ERRORS.SETTINGS_INVALID, `${path} must hold a JSON object`);
  if (value['hooks'] !== undefined && !isObject(value['hooks'])) throw new AdapterError(ADAPTER_ERRORS.SETTINGS_INVALID, `${path}: "hooks" must be an object`);
  return { text, value };
}

/** Indentation and final newline of an existing file, so our rewrite looks like the original. */
function styleOf(text: string | undefined): { indent: string | number; newline: boolean } {
  if (!text) return { indent: 2, newline: true };
  const m = /\n([ \t]+)\S/.exec(text);
  return { indent: m?.[1] ?? 2, newline: text.endsWith('\n') };
}

function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.aep-tmp-${process.pid}`;
  let mode: number | undefined;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    mode = undefined;
  }
  writeFileSync(tmp, text);
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, path);
}

function hasOurs(value: Record<string, unknown>): boolean {
  const hooks = value['hooks'];
  if (!isObject(hooks)) return false;
  return Object.values(hooks).some(
    (groups) => Array.isArray(groups) && groups.some((g) => isObject(g) && Array.isArray(g['hooks']) && g['hooks'].some(isOurHandler)),
  );
}

/** Removes our handlers; returns the settings object without them (empty containers we emptied are removed). */
export function stripOurs(value: Record<string, unknown>): Record<string, unknown> {
  const hooks = value['hooks'];
  if (!isObject(hooks)) return value;
  const outHooks: Record<string, unknown> = {};
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      outHooks[event] = groups;
      continue;
    }
    const kept: unknown[] = [];
    let touched = false;
    for (const g of groups) {
      if (!isObject(g) || !Array.isArray(g['hooks'])) {
        kept.push(g);
        continue;
      }
      const hs = g['hooks'].filter((h) => !isOurHandler(h));
      if (hs.length === g['hooks'].length) {
        kept.push(g);
        continue;
      }
      touched = true;
      if (hs.length > 0) kept.push({ ...g, hooks: hs });
    }
    if (touched && kept.length === 0) continue;
    outHooks[event] = kept;
  }
  const out: Record<string, unknown> = { ...value, hooks: outHooks };
  if (Object.keys(outHooks).length === 0 && Object.keys(hooks).length > 0) delete out['hooks'];
  return out;
}

/** Merges our handlers into the settings file (idempotent) after making sure the hook secret exists. */
export function install(opts: InstallOptions = {}): InstallResult {
  const path = settingsPathFor(opts);
  ensureSecret(opts.secretPath ?? defaultSecretPath());
  const { text, value } = readSettings(path);
  if (hasOurs(value)) return { path, status: 'already-installed' };
  const merged: Record<string, unknown> = { ...value };
  const hooks: Record<string, unknown> = isObject(value['hooks']) ? { ...value['hooks'] } : {};
  for (const [event, groups] of Object.entries(hookSnippet(opts).hooks)) {
    const existing = hooks[event];
    hooks[event] = Array.isArray(existing) ? [...existing, ...groups] : groups;
  }
  merged['hooks'] = hooks;
  // Keep the original bytes so uninstall can restore them exactly.
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(backupPathFor(path), JSON.stringify({ aep: 'claude-code-install', existed: text !== undefined, original: text ?? '' }) + '\n');
  const style = styleOf(text);
  writeAtomic(path, JSON.stringify(merged, null, style.indent) + (style.newline ? '\n' : ''));
  return { path, status: 'installed' };
}

/**
 * Removes our handlers. When nothing else changed since install, the original bytes are restored
 * (or the file removed if we created it); otherwise only our entries are removed.
 */
export function uninstall(opts: InstallOptions = {}): InstallResult {
  const path = settingsPathFor(opts);
  const backupPath = backupPathFor(path);
  const { text, value } = readSettings(path);
  let backup: { existed: boolean; original: string } | undefined;
  if (existsSync(backupPath)) {
    try {
      const b: unknown = JSON.parse(readFileSync(backupPath, 'utf8'));
      if (isObject(b) && b['aep'] === 'claude-code-install' && typeof b['original'] === 'string' && typeof b['existed'] === 'boolean') {
        backup = { existed: b['existed'], original: b['original'] };
      }
    } catch {
      backup = undefined;
    }
  }
  if (!hasOurs(value)) {
    if (backup) unlinkSync(backupPath);
    return { path, status: 'not-installed' };
  }
  const stripped = stripOurs(value);
  if (backup) {
    let originalValue: unknown = {};
    try {
      originalValue = backup.original.trim() === '' ? {} : JSON.parse(backup.original);
    } catch {
      originalValue = undefined;
    }
    if (isDeepStrictEqual(stripped, originalValue)) {
      if (backup.existed) writeAtomic(path, backup.original);
      else unlinkSync(path);
      unlinkSync(backupPath);
      return { path, status: 'restored' };
    }
  }
  const style = styleOf(text);
  writeAtomic(path, JSON.stringify(stripped, null, style.indent) + (style.newline ? '\n' : ''));
  if (backup) unlinkSync(backupPath);
  return { path, status: 'removed' };
}
