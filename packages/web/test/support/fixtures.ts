// Sample events for the inbox tests and the bench: shapes from AEP-0006 (form), AEP-0002 §5.3
// (permission, respond_via), AEP-0006 §5.1 (metadata placeholders).
import { testId } from './browser.js';

/** A sequenced event of an agent's session. */
export function sessionEvent(agent: string, session: string, seq: number, type: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    aep: '0.1',
    id: testId(),
    type,
    time: new Date(Date.now() - 60_000 + seq * 1000).toISOString(),
    source: `aep://test-host/agent/${agent}/session/${session}`,
    agent,
    session,
    seq,
    ...extra,
  };
}

/** The five-field backup form of the AEP-0006 worked example at `redacted`. */
export function formRequest(agent: string, session: string, seq: number, capture: 'redacted' | 'metadata' = 'redacted'): Record<string, unknown> {
  const meta = capture === 'metadata';
  return sessionEvent(agent, session, seq, 'attention.requested', {
    subject: 'backup-config',
    severity: 'notice',
    capture,
    data: {
      kind: 'form',
      prompt: meta ? `${agent} requests form: backup-config` : 'Configure the nightly backup',
      fields: [
        { id: '1', type: 'string', label: meta ? '1' : 'Bucket name', required: true },
        { id: '2', type: 'number', label: meta ? '2' : 'Retention (days)', min: 1, max: 365 },
        { id: '3', type: 'boolean', label: meta ? '3' : 'Encrypt at rest?' },
        {
          id: '4',
          type: 'select',
          label: meta ? '4' : 'Weekdays',
          multi: true,
          choices: [
            { id: '1', label: meta ? '1' : 'Mon' },
            { id: '2', label: meta ? '2' : 'Wed' },
            { id: '3', label: meta ? '3' : 'Fri' },
          ],
        },
        {
          id: '5',
          type: 'select',
          label: meta ? '5' : 'Storage class',
          other: true,
          choices: [
            { id: '1', label: meta ? '1' : 'standard' },
            { id: '2', label: meta ? '2' : 'archive' },
          ],
        },
      ],
      respond_via: ['control'],
    },
  });
}

/** A permission request with allow/deny options. */
export function permissionRequest(agent: string, session: string, seq: number): Record<string, unknown> {
  return sessionEvent(agent, session, seq, 'attention.requested', {
    subject: 'Bash',
    severity: 'notice',
    capture: 'redacted',
    data: {
      kind: 'permission',
      prompt: 'Run `rm -rf build/` in /repo?',
      options: [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ],
      respond_via: ['control'],
    },
  });
}
