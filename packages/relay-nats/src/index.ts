// Public API of @aep/relay-nats: the JetStream scale-out backend for `startRelay({ backend })`
// (issue 16; docs/scale-out.md). Named exports only.
export { natsBackend, NatsBackend, NatsStartError, DUPLICATE_WINDOW_MS, streamDepth } from './backend.js';
export type { NatsBackendOptions } from './backend.js';
export { Names, msgId, sessionToken } from './names.js';
