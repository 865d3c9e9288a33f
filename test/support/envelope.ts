// The smallest valid session Event the protocol tests start from (AEP-0001 §5: every required
// envelope member, a session position, no payload). Spread it and change one member per case.
export const MINIMAL_EVENT = {
  aep: '0.1',
  id: '01A',
  type: 'progress.status',
  time: '2026-08-01T09:00:00Z',
  source: 'aep://h/agent/a/session/s',
  agent: 'a',
  session: 's',
  seq: 1,
} as const;
