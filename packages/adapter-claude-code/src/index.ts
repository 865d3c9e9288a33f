// Public API of @aep/adapter-claude-code: named exports only (no `export *`).
export { ClaudeCodeMapper, safeId, structuralPrompt } from './mapper.js';
export { approvalText, approvalTextForRedaction } from './approval.js';
export type { EventDraft, AttentionSpec, AttentionHookKind, DismissRule, MapResult } from './mapper.js';
export { mappingConfig, parseCaptureOverride, parseCaptureLevel, captureFor, DEFAULT_AGENT } from './config.js';
export type { MappingConfig, CaptureOverride } from './config.js';
export { parseHookInput, parseHookText, checkAskUserQuestion, askQuestions } from './hook-input.js';
export { AdapterError, ADAPTER_ERRORS, ADAPTER_ERROR_TABLE } from './errors.js';
export type { AdapterErrorInfo } from './errors.js';
export type { HookInput, AskQuestion } from './hook-input.js';
export { translateAnswer, hookOutput, askAnswers, NO_DECISION } from './answers.js';
export type { HookAnswer } from './answers.js';
export { engineRequest } from './request.js';
export type { EngineRequestExtras } from './request.js';
export { startDaemon, ClaudeCodeDaemon } from './daemon.js';
export { Steering, STEERING_COMMANDS, CANCELLED_HOOKS, parseCancel, cancelOutput, cancelReason } from './steering.js';
export type { CancelCommand, PauseEnd } from './steering.js';
export { defaultSecretPath, defaultSocketPath, ensureSecret, readSecret } from './local.js';
export { privatePathProblem } from './private-path.js';
export type { DaemonOptions, DaemonHandle, DaemonLimits, Uplink } from './daemon.js';
export { DEFAULT_PORT, DEFAULT_WAIT_MS, DEFAULT_RELAY, DEFAULT_LIMITS } from './constants.js';
export {
  install,
  uninstall,
  hookSnippet,
  shellQuote,
  HOOK_SECRET_ENV,
  settingsPathFor,
  backupPathFor,
  isOurHandler,
  stripOurs,
  BLOCKING_HOOKS,
  LIFECYCLE_HOOKS,
  DEFAULT_DAEMON_URL,
  DEFAULT_BLOCKING_TIMEOUT_S,
  DEFAULT_LIFECYCLE_TIMEOUT_S,
} from './install.js';
export type { InstallOptions, InstallResult, SettingsScope } from './install.js';
export { dryRun } from './dry-run.js';
export type { DryRunOptions } from './dry-run.js';
