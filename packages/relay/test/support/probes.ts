// Test support other packages may reuse (packages/relay-nats runs the same probes against a
// cluster): the checker-shaped clients of ../helpers.ts, re-exported by name.
export { WsClient, auditEnvelope, cmd, dig, ev, http, parseSse, post, sleep, sse, ulid } from '../helpers.js';
export type { HttpResult, SseClient, SseMsg } from '../helpers.js';
