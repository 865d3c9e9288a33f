// Public API of @aep/client, the browser-safe core: no `node:` import and no `ws` anywhere in
// its import graph (pinned by test/browser-safe.test.ts). WebSockets come from the `WebSocket`
// option or `globalThis.WebSocket`; `@aep/client/node` adds `EmitterConnection` and injects `ws`.
// Named exports only (no `export *`).
export { subscribe } from './subscribe.js';
export { CommandSender } from './sender.js';
export { AttentionEngine, POLICY_RULE_ATTR, POLICY_RULE_PATTERN } from './attention.js';
export { ClientError, CLIENT_ERRORS } from './errors.js';
export type { ClientErrorCode, ClientErrorDetails } from './errors.js';
export { AttentionFold, listPending } from './inbox.js';
export type { PendingAttention, ListPendingOptions } from './inbox.js';
export { redactPayload } from './redaction.js';
export { standardSocketFactory } from './socket.js';
export type { ClientSocket, SocketEvents, SocketRequest, SocketFactory, WebSocketLike, WebSocketConstructor, SocketOptions } from './socket.js';
export type {
  WireEvent,
  EmitAttributes,
  ResumePosition,
  ReconnectOptions,
  ControlDeclaration,
  EmitterOptions,
  IncomingCommand,
  CommandDecision,
  CommandHandler,
  EmitterStats,
  SubscribeOptions,
  Subscription,
  CommandSenderOptions,
  Answer,
  RespondInput,
  CancelInput,
  SteerInput,
  RosterSnapshot,
  CommandResult,
  AttentionKind,
  FieldSpec,
  AttentionRequestInput,
  AttentionOutcome,
  AttentionPromise,
  AttentionEngineOptions,
  AttentionRequestView,
  AnswerCheck,
  AnswerVerdict,
  LegacyAnswerCheck,
  AttentionLifecycleType,
  AttentionPort,
} from './types.js';
// The protocol functions this SDK relies on, imported in one place (all from @aep/protocol;
// nothing here is reimplemented).
export { isCommandType, validateFormAnswer, gateAnswer, buildAttentionRequestData, mapTextAnswer, redact, downlevel, createEmitter } from '@aep/protocol';
export type { EventBuilder, RedactOptions } from '@aep/protocol';
