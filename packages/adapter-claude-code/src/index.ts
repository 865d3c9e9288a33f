// Public API of @aep/adapter-claude-code: named exports only (no `export *`).
export { ClaudeCodeMapper, safeId, structuralPrompt } from './mapper.js';
export { approvalText, approvalIssues, isPermissiveAnswer, APPROVAL_PROOF_RULE, APPROVAL_PROOF_DETAIL } from './approval.js';
export type { EventDraft, AttentionSpec, AttentionHookKind, DismissRule, MapResult } from './mapper.js';
export { mappingConfig, parseCaptureOverride, parseCaptureLevel, captureFor, DEFAULT_AGENT } from './config.js';
export type { MappingConfig, CaptureOverride } from './config.js';
export { parseHookInput, parseHookText, checkAskUserQuestion, askQuestions } from './hook-input.js';
export { AdapterError, ADAPTER_ERRORS, ADAPTER_ERROR_TABLE } from './errors.js';
export type { AdapterErrorInfo } from './errors.js';
export type { HookInput, AskQuestion } from './hook-input.js';
export { applyAnswer, checkAnswer, hookOutput, askAnswers, checkAnswerShape, NO_DECISION, FORM_ANSWER_OPTIONS } from './answers.js';
export type { HookAnswer, AnswerResult, AnswerCheckResult } from './answers.js';
export { startDaemon } from './daemon.js';
export type { DaemonOptions, DaemonHandle, Uplink } from './daemon.js';
export { DEFAULT_PORT, DEFAULT_WAIT_MS, DEFAULT_RELAY } from './constants.js';
export { install, uninstall, hookSnippet, settingsPathFor, backupPathFor, isOurHandler, stripOurs, BLOCKING_HOOKS, LIFECYCLE_HOOKS, DEFAULT_DAEMON_URL, DEFAULT_BLOCKING_TIMEOUT_S, DEFAULT_LIFECYCLE_TIMEOUT_S } from './install.js';
export type { InstallOptions, InstallResult, SettingsScope } from './install.js';
export { dryRun } from './dry-run.js';
export type { DryRunOptions } from './dry-run.js';
