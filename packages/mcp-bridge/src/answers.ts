// The bridge's translation of a form answer the engine accepted into MCP `ElicitResult.content`
// (issue 13 item 1: one answer path). The attention engine decides validity itself — the MCP
// constraints a form cannot carry (integer, lengths, format, item counts) travel to it as data
// (`elicitationToForm(...).constraints`) — so this step only restores types. It stays defensive:
// a value it cannot restore is refused with the same `form.*` rule the engine uses, never dropped
// silently (`{"count":2.5}` for an integer property used to be acknowledged while the server
// received nothing for `count` and the relay recorded 2.5).
import { formValuesToElicitationContent, validateElicitationContent } from '@aep/protocol';
import type { ElicitationContentValue, Issue } from '@aep/protocol';

/** Result of {@link checkElicitationAnswer}. */
export type ElicitationAnswerCheck = { ok: true; content: Record<string, ElicitationContentValue> } | { ok: false; issues: Issue[] };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Map the `values` of an answer to MCP `content` for `schema` (types restored, omitted optional
 * properties given their `default`), or say why not with the engine's `form.*` rules at
 * `/data/answer/values/<key>` (messages name the property, never the submitted value: issue 12).
 * Never throws.
 */
export function checkElicitationAnswer(schema: unknown, values: unknown): ElicitationAnswerCheck {
  const vals = isObject(values) ? values : {};
  const content = formValuesToElicitationContent(schema, vals);
  // The protocol keeps a value it cannot restore, so the content check reports it as what it is.
  const issues = validateElicitationContent(schema, content);
  return issues.length === 0 ? { ok: true, content } : { ok: false, issues };
}
