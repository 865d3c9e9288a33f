// Public API of @aep/protocol: the pure AEP 0.1 core (no I/O; loads in a browser).
// Named exports only (no `export *`). Several areas add to this file: append your export lines
// at the end (never rewrite the file), one `export { … } from './x.js';` per module.
export { CAPTURE_LEVELS, DEFAULT_CAPTURE, SEVERITIES, DEFAULT_SEVERITY, captureRank, severityRank, isCaptureLevel, isSeverity } from './levels.js';
export type { CaptureLevel, Severity } from './levels.js';
export type { Issue } from './issue.js';
export { AepError } from './errors.js';
export { elicitationToForm, formValuesToElicitationContent, validateElicitationContent } from './elicitation.js';
export type {
  ElicitationFormChoice,
  ElicitationFormField,
  ElicitationFormData,
  ElicitationValueKind,
  ElicitationFieldMap,
  ElicitationToFormOptions,
  ElicitationToFormResult,
  ElicitationContentValue,
  FormValuesToContentOptions,
} from './elicitation.js';
export { validateEnvelope, validateEvent } from './validate.js';
export type { ValidateOptions } from './validate.js';
export { scopeClass, isCommandType, isValidTypeName, envelopeFastValid } from './envelope.js';
export type { ScopeClass } from './envelope.js';
export { RULES } from './rules.js';
export type { RuleId, RuleInfo } from './rules.js';
export { REGISTERED_TYPES, registryEntry, isRegisteredType, hasPayloadSchema } from './registry.js';
export { CAPTURE_TREES } from './generated/capture-trees.js';
export type { CaptureTree } from './generated/capture-trees.js';
export { AEP_CORE_TYPES, AEP_MANDATORY_TYPES } from './generated/types.js';
export type { AepEvent, KnownAepEvent, AepPayloadMap, AepCoreType } from './generated/types.js';
export {
  TYPE_REGISTRY,
  CATEGORY_REGISTRY,
  CAPTURE_ORDER,
  SEVERITY_ORDER,
  SEVERITY_OTLP,
  SEVERITY_OCSF,
  NACK_REASONS,
  CORE_ATTRIBUTES,
  REQUIRED_ATTRIBUTES,
  TYPE_PATTERN,
  ATTRIBUTE_NAME_PATTERN,
} from './generated/registry.js';
export type { RegistryType, RegistryCategory } from './generated/registry.js';
export { isDateTime, isUri } from './schema-runtime.js';
export { sha256, sha256Hex, toHex, canonicalJson, digest } from './sha256.js';
export { redact, redactValue, isCredentialKey, REDACTED_SECRET, REDACTED_PII, MIN_SECRET_VALUE_LENGTH } from './redact.js';
export type { RedactOptions } from './redact.js';
export { validateFormAnswer, indexFields, choiceIds, FORM_RULES, FORM_DECLINE_OPTION, FORM_CANCEL_OPTION, FORM_REFUSAL_OPTIONS } from './forms.js';
export type { FieldSpec, FormChoice, FormValues, FormRule, ValidateFormAnswerOptions } from './forms.js';
export { gateFormValues, structuralValues, gateAnswer } from './gate.js';
export type { AttentionAnswer, GateAnswerOptions } from './gate.js';
export { buildAttentionRequestData, synthesizePrompt } from './attention-request.js';
export type { AttentionKind, AttentionOption, AttentionRequestInput, AttentionRequestedData, BuildAttentionRequestOptions } from './attention-request.js';
export { mapTextAnswer, REFUSING_OPTION_IDS } from './text-answer.js';
export type { TextAnswerResult, MapTextAnswerOptions } from './text-answer.js';
export { downlevel, createDownleveler } from './downlevel.js';
export { compileFilter, FILTER_RULES, FILTERABLE_ATTRIBUTES, NON_FILTERABLE_ATTRIBUTES } from './filter.js';
export type { CompiledFilter, FilterRule } from './filter.js';
export { parseResumeToken, formatResumeToken } from './resume.js';
export type { ResumePosition } from './resume.js';
export { createEmitter, EventBuilder, AepEventError, checkExtensionAttributes } from './builder.js';
export type { EmitterOptions, EventInput, SessionPosition, ExtensionValue } from './builder.js';
export { StreamValidator, validateStream, fingerprint, fingerprintText, DEFAULT_DEDUPE_WINDOW, CLOSED_PER_SESSION } from './stream.js';
export type { StreamValidatorOptions, PushHints } from './stream.js';
export type {
  SessionStartedData,
  SessionStartedEvent,
  SessionEndedData,
  SessionEndedEvent,
  RunStartedData,
  RunStartedEvent,
  RunFinishedData,
  RunFinishedEvent,
  RunFailedData,
  RunFailedEvent,
  RunCancelledData,
  RunCancelledEvent,
  ToolRequestedData,
  ToolRequestedEvent,
  ToolCompletedData,
  ToolCompletedEvent,
  ToolFailedData,
  ToolFailedEvent,
  ToolDeniedData,
  ToolDeniedEvent,
  AttentionRequestedEvent,
  AttentionAnsweredData,
  AttentionAnsweredEvent,
  AttentionResolvedData,
  AttentionResolvedEvent,
  AttentionTimeoutData,
  AttentionTimeoutEvent,
  SessionCompactedData,
  SessionCompactedEvent,
  RunStepStartedData,
  RunStepStartedEvent,
  RunStepFinishedData,
  RunStepFinishedEvent,
  ProgressStatusData,
  ProgressStatusEvent,
  ProgressTaskPlannedData,
  ProgressTaskPlannedEvent,
  ProgressTaskCompletedData,
  ProgressTaskCompletedEvent,
  ProgressArtifactProducedData,
  ProgressArtifactProducedEvent,
  DelegationSubagentStartedData,
  DelegationSubagentStartedEvent,
  DelegationSubagentStoppedData,
  DelegationSubagentStoppedEvent,
  AttentionRoutedData,
  AttentionRoutedEvent,
  AgentPresenceData,
  AgentPresenceEvent,
  AgentIdleData,
  AgentIdleEvent,
  AgentHealthData,
  AgentHealthEvent,
  AgentHeartbeatData,
  AgentHeartbeatEvent,
  ErrorRaisedData,
  ErrorRaisedEvent,
  StateSnapshotData,
  StateSnapshotEvent,
  StateDeltaData,
  StateDeltaEvent,
  ResourceRetrievalRequestedData,
  ResourceRetrievalRequestedEvent,
  ResourceRetrievalReturnedData,
  ResourceRetrievalReturnedEvent,
  ResourceRetrievalRerankedData,
  ResourceRetrievalRerankedEvent,
  ResourceCitationRecordedData,
  ResourceCitationRecordedEvent,
  AssessmentEvaluationRecordedData,
  AssessmentEvaluationRecordedEvent,
  AssessmentFeedbackReceivedData,
  AssessmentFeedbackReceivedEvent,
  AssessmentGuardrailRecordedData,
  AssessmentGuardrailRecordedEvent,
  ControlAttentionRespondData,
  ControlAttentionRespondEvent,
  ControlCancelData,
  ControlCancelEvent,
  ControlPauseData,
  ControlPauseEvent,
  ControlResumeData,
  ControlResumeEvent,
  ControlAcceptedData,
  ControlAcceptedEvent,
  ControlRejectedData,
  ControlRejectedEvent,
} from './generated/types.js';
export { visibleText, hasInvisible, isInvisibleCodePoint } from './visible.js';
export {
  approvalDigest,
  approvalProof,
  checkApprovalProof,
  approvalView,
  optionEffect,
  labelEffect,
  APPROVAL_DIGEST_ATTR,
  APPROVAL_PROOF_ATTR,
  PERMISSIVE_OPTION_IDS,
  REFUSING_EFFECT_IDS,
} from './approval.js';
export type { OptionEffect, OptionView, ApprovalView } from './approval.js';
export { VALUES_PATH, pointer, matchesFormat, isStringFormat, codePointLength } from './forms.js';
export type { FieldConstraints, FormConstraints, StringFormat } from './forms.js';
export type { ValidateElicitationContentOptions } from './elicitation.js';
export { redactAttentionRequestData } from './attention-request.js';
export { ulid, monotonicFactory, cryptoRandomSource, isUlid, ulidTime, ULID_ALPHABET, ULID_PATTERN } from './ulid.js';
export type { RandomSource } from './ulid.js';
export {
  AEP_VERSION,
  SUPPORTED_VERSIONS,
  AEP_VERSION_HEADER,
  SSE_CONTENT_TYPE,
  JSON_CONTENT_TYPE,
  WIRE_PATHS,
  selectVersion,
  isEventType,
  eventsUrl,
  socketUrl,
  streamUrl,
  redactUrl,
} from './wire.js';
export type { StreamQuery } from './wire.js';
export {
  SSE_PING,
  SSE_REPLAY_EXHAUSTED,
  sseLineSafe,
  encodeSseMessage,
  encodeSseEvent,
  encodeSseComment,
  encodeReplayExhausted,
  parseSseComment,
  SseParser,
  parseSse,
} from './sse.js';
export type { SseOutgoing, SseMessage, SseReplayExhausted, SsePing, SseComment, SseItem, SseParserOptions } from './sse.js';
export { NDJSON_CONTENT_TYPE, splitNdjson, parseNdjson, encodeNdjsonLines, encodeNdjson } from './ndjson.js';
export type { NdjsonLine, NdjsonParse } from './ndjson.js';
export {
  HELLO_ROLES,
  FRAME_TYPES,
  CLAIM_PATTERN,
  isClaim,
  base64url,
  generateClaim,
  helloFrame,
  relayHelloFrame,
  subscribeFrame,
  subscribedFrame,
  unsubscribeFrame,
  unsubscribedFrame,
  rosterRequestFrame,
  rosterReplyFrame,
  pingFrame,
  pongFrame,
  errorFrame,
  replayExhaustedFrame,
  closingFrame,
  encodeFrame,
  classifySocketValue,
  parseSocketMessage,
  isRosterReply,
} from './frames.js';
export type {
  HelloRole,
  HelloIdentity,
  ControlCapability,
  Capabilities,
  HelloFrame,
  SubscribeFrame,
  SubscribedFrame,
  UnsubscribeFrame,
  UnsubscribedFrame,
  RosterEntry,
  OfflineRequest,
  RosterRequestFrame,
  RosterReplyFrame,
  PingFrame,
  PongFrame,
  ErrorFrame,
  ReplayExhaustedFrame,
  DeliveredPosition,
  ClosingFrame,
  Frame,
  SocketMessage,
  HelloInput,
  SubscribeInput,
  ErrorInput,
} from './frames.js';
// The off-heap (namespace, key) table of the stream rules' dedupe window (AEP-0001 §7.4: consumers
// dedupe on (source, id)); also the bench floor's admission dedupe (issue 19).
export { KeyTable, keyList, keyHash, KEY_SLOT } from './key-table.js';
export type { KeyList } from './key-table.js';
