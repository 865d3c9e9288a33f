// The bridge's translation of a form answer the engine accepted into MCP `ElicitResult.content`,
// with the MCP checks an AEP form does not carry yet (issue 13 item 1). Everything the person
// submitted is either restored to the property's MCP type or refused: a value is never dropped
// silently (`{"count":2.5}` for an integer property used to be acknowledged while the server
// received nothing for `count` and the relay recorded 2.5).
//
// Once the attention engine checks integer-ness and the other constraints itself (typed
// validate results, constraints carried as data), `checkElicitationAnswer` reduces to the
// restoration step: the issues below can no longer occur for an answer the engine accepted.
import { formValuesToElicitationContent, validateElicitationContent } from '@aep/protocol';
import type { ElicitationContentValue, Issue } from '@aep/protocol';

/** Where the values of a form answer live in a `control.attention.respond` (AEP-0006 §4). */
export const VALUES_PATH = '/data/answer/values';

const SECTION = 'MCP 2025-11-25 elicitation (requestedSchema)';

/** Result of {@link checkElicitationAnswer}. */
export type ElicitationAnswerCheck =
  | { ok: true; content: Record<string, ElicitationContentValue> }
  | { ok: false; issues: Issue[] };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function own(o: Record<string, unknown>, k: string): boolean {
  return Object.prototype.hasOwnProperty.call(o, k);
}

function pointer(key: string): string {
  return `${VALUES_PATH}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

/**
 * The issue for a present value that cannot be restored to its property's MCP type. Messages name
 * the property (a structural key chosen by the server) and the rule, never the submitted value
 * (issue 12: nack messages reach subscribers the value must not reach).
 */
function typeIssue(key: string, property: Record<string, unknown>): Issue {
  const type = property['type'];
  if (type === 'integer') return { rule: 'mcp-elicitation.integer', path: pointer(key), message: `"${key}" is not an integer (the MCP schema asks for an integer)`, section: SECTION };
  const want = type === 'number' ? 'a number' : type === 'boolean' ? 'a boolean' : type === 'array' ? 'an array of its enum values' : 'a string';
  return { rule: 'mcp-elicitation.type', path: pointer(key), message: `"${key}" is not ${want} (the MCP schema asks for ${want})`, section: SECTION };
}

/**
 * Map the `values` of an answer to MCP `content` for `schema` (types restored, omitted optional
 * properties given their `default`), or say why not: a present value that cannot be restored to
 * its property's type (`mcp-elicitation.integer` / `.type`), then the constraints of
 * `validateElicitationContent` (lengths, format, bounds, enum membership, item counts, required).
 * A required property whose value was present but unrestorable is reported as the type problem,
 * not as "missing". Paths are `/data/answer/values/<key>`. Never throws.
 */
export function checkElicitationAnswer(schema: unknown, values: unknown): ElicitationAnswerCheck {
  const vals = isObject(values) ? values : {};
  const props = isObject(schema) && isObject(schema['properties']) ? schema['properties'] : {};
  const content = formValuesToElicitationContent(schema, vals);
  const issues: Issue[] = [];
  const typed = new Set<string>();
  for (const key of Object.keys(vals)) {
    const v = vals[key];
    if (v === undefined || v === null || !own(props, key) || own(content, key)) continue;
    const p = props[key];
    issues.push(typeIssue(key, isObject(p) ? p : {}));
    typed.add(pointer(key));
  }
  for (const i of validateElicitationContent(schema, content)) {
    const path = `${VALUES_PATH}${i.path}`;
    if (typed.has(path)) continue; // already reported as what it is (present, wrong type)
    issues.push({ ...i, path });
  }
  return issues.length === 0 ? { ok: true, content } : { ok: false, issues };
}
