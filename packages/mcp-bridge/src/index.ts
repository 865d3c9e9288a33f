// Public API of @aep/mcp-bridge (`aep mcp wrap`): named exports only (no `export *`).
export { runMcpWrap, defaultAgentName } from './run.js';
export { BridgeError, BRIDGE_ERRORS, BRIDGE_JSONRPC_ERRORS } from './errors.js';
export type { BridgeErrorCode } from './errors.js';
export type { McpWrapOptions } from './run.js';
export { McpBridge, DEFAULT_ELICITATION_TIMEOUT_MS, DEFAULT_MAX_PENDING, REQUEST_CANCELLED_CODE } from './bridge.js';
export type { AepPort, AskHandle, AskOutcome, FormAsk, UrlAsk, McpBridgeOptions, BridgeStats, SteerCancel, SteerHandler, SteerReport } from './bridge.js';
export { BRIDGE_ACCEPTS, CANCEL_RULES, checkCancel } from './steering.js';
export type { CancelVerdict } from './steering.js';
export { AepSide } from './aep.js';
export type { AepSideOptions } from './aep.js';
export { LineSplitter } from './lines.js';
export { childEnvironment, CHILD_ENV_ALLOW } from './env.js';
export type { ChildEnvironment } from './env.js';
export { checkElicitationAnswer } from './answers.js';
export type { ElicitationAnswerCheck } from './answers.js';
