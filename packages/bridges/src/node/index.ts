// Public API of @aep/bridges/node: the live bridges (Node 20 only): the relay → receiver loop
// with resume state, the OTLP/HTTP JSON and CloudEvents HTTP senders, and the CloudEvents
// receiver that ingests into a relay. Named exports only.
export { runLiveBridge } from './live.js';
export type { LiveBridgeOptions, LiveBridgeStats, Mapped } from './live.js';
export { ResumeState, markOf, DEFAULT_STATE_LIMITS } from './state.js';
export type { StateLimits, EventMark } from './state.js';
export { otlpHttpSender, ceHttpSender, otlpLogsUrl, displayUrl } from './http.js';
export type { Sender, SendResult, OtlpSenderOptions, CeSenderOptions } from './http.js';
export { startCeReceiver, CE_RECEIVER_ERRORS } from './serve.js';
export type { CeReceiver, CeReceiverOptions } from './serve.js';
export { BridgeNodeError } from './errors.js';
export type { BridgeNodeErrorCode } from './errors.js';
