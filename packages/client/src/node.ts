// Public API of @aep/client/node: the browser-safe core with `ws` injected as the default
// socket (the token then travels as `Authorization: Bearer`, never in a URL, and a refused
// upgrade reports its HTTP status), plus what needs Node: `EmitterConnection` (durable epochs
// in `node:fs`, host names from `node:os`). Named exports only (no `export *`).
import { subscribe as coreSubscribe, CommandSender as CoreCommandSender } from './index.js';
import type { CommandSenderOptions, SubscribeOptions, Subscription, WireEvent } from './index.js';
import { hostName } from './host.js';
import { nodeSocketFactory } from './socket-node.js';
import { defaultSource } from './util.js';

export { EmitterConnection } from './emitter.js';
export { nodeSocketFactory } from './socket-node.js';
export {
  AttentionEngine,
  POLICY_RULE_ATTR,
  POLICY_RULE_PATTERN,
  ClientError,
  CLIENT_ERRORS,
  AttentionFold,
  listPending,
  redactPayload,
  standardSocketFactory,
} from './index.js';
export type {
  ClientErrorCode,
  ClientErrorDetails,
  PendingAttention,
  ListPendingOptions,
  ClientSocket,
  SocketEvents,
  SocketRequest,
  SocketFactory,
  WebSocketLike,
  WebSocketConstructor,
  SocketOptions,
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
} from './index.js';
export { isCommandType, validateFormAnswer, gateAnswer, buildAttentionRequestData, mapTextAnswer, redact, downlevel, createEmitter } from './index.js';
export type { EventBuilder, RedactOptions } from './index.js';

/** `ws` unless the caller chose a socket (`socketFactory` or `WebSocket`). */
function withNodeSocket<T extends { socketFactory?: unknown; WebSocket?: unknown }>(o: T): T {
  return o.socketFactory !== undefined || o.WebSocket !== undefined ? o : { ...o, socketFactory: nodeSocketFactory };
}

/** {@link coreSubscribe} with `ws` as the default WebSocket. */
export function subscribe(options: SubscribeOptions, onEvent: (event: WireEvent, raw: string) => void): Subscription {
  return coreSubscribe(withNodeSocket(options), onEvent);
}

/**
 * The core `CommandSender` with `ws` as the default socket, `aep://{hostname}/agent/{agent}` as
 * the default `source` and `{hostname}/{pid}` as the default `hello.identity.instance`.
 */
export class CommandSender extends CoreCommandSender {
  constructor(options: CommandSenderOptions) {
    const agent = options.agent ?? 'aep-cli';
    super(
      withNodeSocket({
        ...options,
        source: options.source ?? defaultSource(agent, hostName()),
        instance: options.instance ?? `${hostName()}/${process.pid}`,
      }),
    );
  }

  /** Connect and complete `hello` (see the core `CommandSender.connect`). */
  static override async connect(options: CommandSenderOptions): Promise<CommandSender> {
    const s = new CommandSender(options);
    await s.open();
    return s;
  }
}
