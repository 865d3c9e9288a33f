// Parsing of Claude Code hook input (docs/integrations.md §1). Every hook arrives as one JSON object;
// we check only what the mapping relies on and report the first broken rule with a stable code,
// so a malformed payload is logged and answered with "no decision" (docs/conventions.md §9), never a crash.

import { ADAPTER_ERRORS, AdapterError } from './errors.js';

/** The common input fields of every hook (docs/integrations.md §1 "Common input fields"). */
export interface HookInput {
  hook_event_name: string;
  session_id: string;
  transcript_path?: string;
  cwd?: string;
  permission_mode?: string;
  /** Present inside subagents. */
  agent_id?: string;
  agent_type?: string;
  tool_name?: string;
  tool_input?: Record<string, unknown>;
  tool_use_id?: string;
  [key: string]: unknown;
}

/** Hooks whose events need a tool (`tool_name` string, `tool_input` object). */
const TOOL_HOOKS = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'PermissionDenied']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bad(message: string): AdapterError {
  return new AdapterError(ADAPTER_ERRORS.HOOK_INVALID, message);
}

/**
 * Checks a parsed hook body and returns it typed. Throws {@link AdapterError}
 * (`AEP_CC_HOOK_INVALID`) naming the first rule broken.
 */
export function parseHookInput(value: unknown): HookInput {
  if (!isObject(value)) throw bad('hook input must be a JSON object (docs/integrations.md §1)');
  const name = value['hook_event_name'];
  if (typeof name !== 'string' || name === '') throw bad('hook input: hook_event_name must be a non-empty string');
  const sid = value['session_id'];
  if (typeof sid !== 'string' || sid === '') throw bad('hook input: session_id must be a non-empty string');
  for (const k of ['agent_id', 'agent_type', 'tool_use_id', 'cwd', 'transcript_path', 'permission_mode'] as const) {
    const v = value[k];
    if (v !== undefined && typeof v !== 'string') throw bad(`hook input: ${k} must be a string when present`);
  }
  if (TOOL_HOOKS.has(name)) {
    if (typeof value['tool_name'] !== 'string' || value['tool_name'] === '') throw bad(`hook input (${name}): tool_name must be a non-empty string`);
    const ti = value['tool_input'];
    if (ti !== undefined && !isObject(ti)) throw bad(`hook input (${name}): tool_input must be an object`);
  }
  if (name === 'PreToolUse' && value['tool_name'] === 'AskUserQuestion') {
    const issue = checkAskUserQuestion(value['tool_input']);
    if (issue) throw bad(`hook input (AskUserQuestion): ${issue}`);
  }
  return value as HookInput;
}

/** One AskUserQuestion question (docs/integrations.md §1 "Answering AskUserQuestion"). */
export interface AskQuestion {
  question: string;
  header?: string;
  multiSelect?: boolean;
  options: { label: string; description?: string }[];
}

/**
 * Checks `tool_input.questions`: 1-4 questions with unique texts, 2-4 options with unique
 * labels each. We are lenient on counts beyond the documented bounds only where the mapping stays
 * sound (it does for any count >= 1 question and >= 1 option); uniqueness is required because
 * answers are keyed by question text and mapped back by label.
 */
export function checkAskUserQuestion(toolInput: unknown): string | undefined {
  if (!isObject(toolInput)) return 'tool_input must be an object';
  const qs = toolInput['questions'];
  if (!Array.isArray(qs) || qs.length === 0) return 'tool_input.questions must be a non-empty array';
  const texts = new Set<string>();
  for (let i = 0; i < qs.length; i++) {
    const q: unknown = qs[i];
    if (!isObject(q)) return `questions[${i}] must be an object`;
    if (typeof q['question'] !== 'string' || q['question'] === '') return `questions[${i}].question must be a non-empty string`;
    if (texts.has(q['question'])) return `questions[${i}].question repeats another question (answers are keyed by question text)`;
    texts.add(q['question']);
    if (q['header'] !== undefined && typeof q['header'] !== 'string') return `questions[${i}].header must be a string`;
    if (q['multiSelect'] !== undefined && typeof q['multiSelect'] !== 'boolean') return `questions[${i}].multiSelect must be a boolean`;
    const opts = q['options'];
    if (!Array.isArray(opts) || opts.length === 0) return `questions[${i}].options must be a non-empty array`;
    const labels = new Set<string>();
    for (let j = 0; j < opts.length; j++) {
      const o: unknown = opts[j];
      if (!isObject(o) || typeof o['label'] !== 'string' || o['label'] === '') return `questions[${i}].options[${j}].label must be a non-empty string`;
      if (labels.has(o['label'])) return `questions[${i}].options[${j}].label repeats another label`;
      labels.add(o['label']);
    }
  }
  return undefined;
}

/** The questions of a checked AskUserQuestion `tool_input`. */
export function askQuestions(toolInput: Record<string, unknown> | undefined): AskQuestion[] {
  return (toolInput?.['questions'] ?? []) as AskQuestion[];
}

/**
 * Parses raw hook bytes (HTTP body or command-hook stdin). Throws {@link AdapterError}
 * (`AEP_CC_HOOK_INVALID`) when the text is not JSON or the object breaks a rule.
 */
export function parseHookText(text: string): HookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad('hook input is not valid JSON');
  }
  return parseHookInput(value);
}
