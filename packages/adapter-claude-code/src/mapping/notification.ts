// Notification (docs/integrations.md §1): attention-like subtypes (permission_prompt, idle_prompt,
// elicitation_dialog) become informational requests answered in the terminal; the rest
// `progress.status`.
import { gatedText } from '../content.js';
import type { HookContext, HookMapping, MapperState } from './state.js';
import { str } from './state.js';

const ATTENTION_SUBTYPES: Readonly<Record<string, 'permission' | 'input'>> = {
  permission_prompt: 'permission',
  idle_prompt: 'input',
  elicitation_dialog: 'input',
};

function notification(m: MapperState, { hook, s, out, now }: HookContext): undefined {
  const sub = str(hook['notification_type']);
  const message = typeof hook['message'] === 'string' ? hook['message'] : '';
  const kind = sub !== undefined && Object.hasOwn(ATTENTION_SUBTYPES, sub) ? ATTENTION_SUBTYPES[sub] : undefined;
  const elicitationOpen = s.oob.some((o) => o.closeOn === 'elicitation-result');
  // No duplicate of a dialog we already show: an open informational request, or a held question.
  if (kind && !(sub === 'elicitation_dialog' && elicitationOpen) && !s.oob.some((o) => o.closeOn === 'activity') && !m.pendingProbe(s.id)) {
    const data = m.requestData(
      {
        kind,
        prompt: message || (kind === 'permission' ? 'Claude Code needs your permission' : 'Claude Code is waiting for your input'),
        respond_via: ['oob'],
      },
      undefined,
    );
    m.openOob(s, out, now, { closeOn: 'activity' }, data);
    return undefined;
  }
  const data: Record<string, unknown> = {};
  if (sub && /^[A-Za-z0-9_.-]{1,64}$/.test(sub)) data['phase'] = sub;
  const msg = message ? gatedText(m.config, m.cap('progress.status'), message) : undefined;
  if (msg !== undefined) data['message'] = msg;
  out.push(m.draft('progress.status', s, data));
  return undefined;
}

/** The notification family. */
export const NOTIFICATION_HOOKS: Readonly<Record<string, HookMapping>> = {
  Notification: { scope: 'own', closes: 'none', map: notification },
};
