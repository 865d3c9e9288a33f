// AskUserQuestion (PreToolUse) -> one blocking `kind:"form"` request (AEP-0002 Annex A pin;
// docs/integrations.md §3; AEP-0002 Annex A).
import type { AttentionRequestInput, FieldSpec } from '@aep/protocol';
import type { HookInput } from '../hook-input.js';
import { askQuestions } from '../hook-input.js';
import type { MapperState, SessionState } from './state.js';
import type { AttentionSpec } from './types.js';

/**
 * The form's `data` is exactly the pin, `{kind, prompt, fields, respond_via:["control"]}`: one
 * `select` per question with 1-based index ids, label `"{header}: {question}"`, `required` and
 * `other` on every field, `multi:true` only where `multiSelect` is true, prompt
 * `"{agent} asks {n} questions"` at every level (structural); at `metadata` labels become index
 * placeholders. Decline / cancel are answer options, not members (contract C2).
 */
export function askSpec(m: MapperState, s: SessionState, hook: HookInput, toolRef: string): AttentionSpec {
  const questions = askQuestions(hook.tool_input);
  const fields: FieldSpec[] = questions.map((q, i) => {
    const f: FieldSpec = { id: String(i + 1), type: 'select', label: q.header ? `${q.header}: ${q.question}` : q.question, required: true };
    if (q.multiSelect === true) f.multi = true;
    f.other = true;
    f.choices = q.options.map((o, j) => ({ id: String(j + 1), label: o.label }));
    return f;
  });
  const prompt = `${m.config.agent} asks ${questions.length} questions`;
  const input: AttentionRequestInput = { kind: 'form', prompt, fields, respond_via: ['control'] };
  const data = m.requestData(input, 'AskUserQuestion', () => prompt, 'index');
  const request = m.draft('attention.requested', s, data, { subject: 'AskUserQuestion', severity: 'notice', causeRef: toolRef, ref: m.newRef('attention') });
  const spec: AttentionSpec = { hook: 'ask', request, toolName: 'AskUserQuestion', questions, fields };
  if (hook.tool_use_id) spec.toolUseId = hook.tool_use_id;
  if (hook.tool_input) spec.toolInput = hook.tool_input;
  return spec;
}
