// MCP elicitations inside Claude Code (docs/integrations.md §1 "Elicitation"): form mode -> one
// blocking `kind:"form"` request through the shared `elicitationToForm` (Annex A pin, exactly its
// `data`); URL mode and schemas a form cannot express -> an informational request closed by
// ElicitationResult.
import { elicitationToForm, redact } from '@aep/protocol';
import type { HookContext, HookMapping, MapperState } from './state.js';
import { str, structuralPrompt } from './state.js';
import type { AttentionSpec, EventDraft } from './types.js';

function elicitation(m: MapperState, { hook, s, out, now }: HookContext): AttentionSpec | undefined {
  const type = 'attention.requested';
  const cap = m.cap(type);
  const server = str(hook['mcp_server_name']);
  const message = typeof hook['message'] === 'string' ? hook['message'] : '';
  const mode = str(hook['mode']) ?? 'form';
  if (mode === 'form') {
    const schema = hook['requested_schema'] ?? hook['requestedSchema'];
    const params = { message, requestedSchema: schema, mode: 'form' };
    const redaction = m.redaction();
    const mapped = elicitationToForm(params, {
      agent: m.config.agent,
      capture: cap === 'none' ? 'metadata' : cap,
      redact: (t: string) => redact(t, redaction),
    });
    const real = elicitationToForm(params, { agent: m.config.agent, capture: 'full' });
    if (mapped.ok && real.ok) {
      // `data` is exactly the shared mapping's (Annex A pin): decline/cancel are answer options
      // every form accepts without being listed (contract C2).
      const extra: Partial<EventDraft> = { severity: 'notice', ref: m.newRef('attention') };
      if (server) extra.subject = server;
      const request = m.draft(type, s, { ...mapped.data }, extra);
      return { hook: 'elicitation', request, schema, fields: real.data.fields, constraints: real.constraints };
    }
  }
  // URL mode (and schemas a form cannot express): informational only, answered in Claude Code's
  // own dialog. We never relay a URL to open: at `metadata` it could leak, and at any level a
  // remote "open this link" button is a phishing surface (AEP-0002 §8). Documented in README.
  const menu = ['accept', 'decline', 'cancel'];
  const kind = mode === 'url' ? 'auth' : 'input';
  const data = m.requestData(
    {
      kind,
      prompt: message || structuralPrompt(m.config.agent, kind, server),
      options: menu.map((id) => ({ id, label: id[0]!.toUpperCase() + id.slice(1) })),
      respond_via: ['oob'],
    },
    server,
  );
  const o: { closeOn: 'elicitation-result'; options: string[]; server?: string } = { closeOn: 'elicitation-result', options: menu };
  if (server) o.server = server;
  m.openOob(s, out, now, o, data, server);
  return undefined;
}

function elicitationResult(m: MapperState, { hook, s, out, dismiss, now }: HookContext): undefined {
  const server = str(hook['mcp_server_name']);
  if (server) dismiss.push({ session: s.id, server });
  const action = str(hook['action']);
  const answer: Record<string, unknown> = action && ['accept', 'decline', 'cancel'].includes(action) ? { option: action } : {};
  m.closeOob(s, out, now, (o) => o.closeOn === 'elicitation-result' && (o.server === undefined || o.server === server), answer);
  return undefined;
}

/** The elicitation family. */
export const ELICITATION_HOOKS: Readonly<Record<string, HookMapping>> = {
  Elicitation: { scope: 'own', closes: 'none', map: elicitation },
  ElicitationResult: { scope: 'own', closes: 'none', map: elicitationResult },
};
