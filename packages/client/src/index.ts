// Public API of @aep/client: named exports only (no `export *`).
export { EmitterConnection } from './emitter.js';
export { subscribe } from './subscribe.js';
export { CommandSender } from './sender.js';
export { AttentionEngine } from './attention.js';
export { ClientError } from './errors.js';
export { AttentionFold, listPending } from './inbox.js';
export type { PendingAttention, ListPendingOptions } from './inbox.js';
export type {
  WireEvent, EmitAttributes, ResumePosition, ReconnectOptions, ControlDeclaration, EmitterOptions, IncomingCommand,
  CommandDecision, CommandHandler, EmitterStats, SubscribeOptions, Subscription, CommandSenderOptions, Answer,
  RespondInput, CancelInput, CommandResult, AttentionKind, FieldSpec, AttentionRequestInput, AttentionOutcome,
  AttentionPromise, AttentionEngineOptions, AttentionRequestView, AnswerCheck, AnswerVerdict, LegacyAnswerCheck, AttentionLifecycleType, AttentionPort,
} from './types.js';
