// GENERATED FILE: do not edit. Regenerate with `npm run codegen`.
// Source: schemas/ (envelope, registry/, types/) via scripts/codegen/generate.ts.
// Input digest: sha256:81534306e2a75249b8f28f0933d51294
/** The event envelope (AEP-0001 §5): 16 context attributes, optional `data`, extension attributes. */
export interface AepEvent {
  aep: "0.1";
  id: string;
  type: string;
  subject?: string;
  time: string;
  source: string;
  agent: string;
  session?: string;
  run?: string;
  step?: string;
  seq?: number;
  epoch?: number;
  cause?: string;
  traceparent?: string;
  severity?: "debug" | "info" | "notice" | "warning" | "error" | "critical";
  capture?: "none" | "metadata" | "redacted" | "full";
  data?: Record<string, unknown>;
  /** Extension attributes (AEP-0001 §5.4): `[a-z0-9]{1,20}`, string, integer or boolean. */
  [extension: string]: string | number | boolean | Record<string, unknown> | undefined;
}

export interface SessionStartedDataParent {
  session: string;
  run?: string;
  agent?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface SessionStartedDataClient {
  name: string;
  version?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `session.started` payload (mandatory). */
export interface SessionStartedData {
  /** capture >= redacted */
  label?: string;
  parent?: SessionStartedDataParent;
  client?: SessionStartedDataClient;
  "gen_ai.request.model"?: string;
  /** capture >= redacted */
  cwd?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `session.started` event. */
export interface SessionStartedEvent extends AepEvent {
  type: "session.started";
  data?: SessionStartedData;
}

/** `session.ended` payload (mandatory). */
export interface SessionEndedData {
  reason?: "normal" | "error" | "timeout" | "killed" | "compaction";
  duration_ms?: number;
  runs?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `session.ended` event. */
export interface SessionEndedEvent extends AepEvent {
  type: "session.ended";
  data?: SessionEndedData;
}

export interface RunStartedDataCost {
  currency: string;
  total?: number;
  prompt?: number;
  completion?: number;
  cache?: number;
  reasoning?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `run.started` payload (mandatory). */
export interface RunStartedData {
  trigger?: "user" | "schedule" | "agent" | "control" | "resume";
  /** capture >= redacted */
  prompt?: string;
  "gen_ai.usage.input_tokens"?: number;
  "gen_ai.usage.output_tokens"?: number;
  cost?: RunStartedDataCost;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `run.started` event. */
export interface RunStartedEvent extends AepEvent {
  type: "run.started";
  data?: RunStartedData;
}

export interface RunFinishedDataCost {
  currency: string;
  total?: number;
  prompt?: number;
  completion?: number;
  cache?: number;
  reasoning?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `run.finished` payload (mandatory). */
export interface RunFinishedData {
  duration_ms?: number;
  /** capture >= redacted */
  summary?: string;
  "gen_ai.usage.input_tokens"?: number;
  "gen_ai.usage.output_tokens"?: number;
  cost?: RunFinishedDataCost;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `run.finished` event. */
export interface RunFinishedEvent extends AepEvent {
  type: "run.finished";
  data?: RunFinishedData;
}

export interface RunFailedDataError {
  type?: string;
  /** capture >= redacted */
  message?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `run.failed` payload (mandatory). */
export interface RunFailedData {
  reason: string;
  error?: RunFailedDataError;
  duration_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `run.failed` event. */
export interface RunFailedEvent extends AepEvent {
  type: "run.failed";
  data?: RunFailedData;
}

/** `run.cancelled` payload (mandatory). */
export interface RunCancelledData {
  by?: "user" | "control" | "policy" | "shutdown";
  /** capture >= redacted */
  reason?: string;
  duration_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `run.cancelled` event. */
export interface RunCancelledEvent extends AepEvent {
  type: "run.cancelled";
  data?: RunCancelledData;
}

export interface ToolRequestedDataTool {
  name: string;
  call_id?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `tool.requested` payload (mandatory). */
export interface ToolRequestedData {
  tool: ToolRequestedDataTool;
  args_digest?: string;
  /** capture >= redacted */
  args_redacted?: Record<string, unknown>;
  /** capture >= full */
  args?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `tool.requested` event. */
export interface ToolRequestedEvent extends AepEvent {
  type: "tool.requested";
  data?: ToolRequestedData;
}

export interface ToolCompletedDataTool {
  name: string;
  call_id?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ToolCompletedDataCost {
  currency: string;
  total?: number;
  prompt?: number;
  completion?: number;
  cache?: number;
  reasoning?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `tool.completed` payload (mandatory). */
export interface ToolCompletedData {
  tool: ToolCompletedDataTool;
  duration_ms?: number;
  status?: string;
  result_digest?: string;
  /** capture >= redacted */
  result_redacted?: Record<string, unknown> | string;
  /** capture >= full */
  result?: Record<string, unknown> | string;
  "gen_ai.usage.input_tokens"?: number;
  "gen_ai.usage.output_tokens"?: number;
  cost?: ToolCompletedDataCost;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `tool.completed` event. */
export interface ToolCompletedEvent extends AepEvent {
  type: "tool.completed";
  data?: ToolCompletedData;
}

export interface ToolFailedDataTool {
  name: string;
  call_id?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ToolFailedDataError {
  type?: string;
  /** capture >= redacted */
  message?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `tool.failed` payload (mandatory). */
export interface ToolFailedData {
  tool: ToolFailedDataTool;
  error: ToolFailedDataError;
  duration_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `tool.failed` event. */
export interface ToolFailedEvent extends AepEvent {
  type: "tool.failed";
  data?: ToolFailedData;
}

export interface ToolDeniedDataTool {
  name: string;
  call_id?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `tool.denied` payload (mandatory). */
export interface ToolDeniedData {
  tool: ToolDeniedDataTool;
  by: "policy" | "user_setting" | "runtime";
  rule?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `tool.denied` event. */
export interface ToolDeniedEvent extends AepEvent {
  type: "tool.denied";
  data?: ToolDeniedData;
}

export interface AttentionRequestedDataOptionsItem {
  id: string;
  /** [metadata*] exception (label) */
  label: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface AttentionRequestedDataFieldsItemChoicesItem {
  id: string;
  /** [metadata*] exception (label) */
  label: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface AttentionRequestedDataFieldsItem {
  id: string;
  type: "string" | "number" | "boolean" | "select";
  /** [metadata*] exception (label) */
  label: string;
  required?: boolean;
  multi?: boolean;
  other?: boolean;
  choices?: Array<AttentionRequestedDataFieldsItemChoicesItem>;
  min?: number;
  max?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `attention.requested` payload (mandatory). */
export interface AttentionRequestedData {
  kind: "permission" | "input" | "auth" | "review" | "form" | "other";
  /** [metadata*] exception (prompt) */
  prompt: string;
  options?: Array<AttentionRequestedDataOptionsItem>;
  fields?: Array<AttentionRequestedDataFieldsItem>;
  expires_at?: string;
  respond_via?: Array<"control" | "oob">;
  /** capture >= full */
  context?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `attention.requested` event. */
export interface AttentionRequestedEvent extends AepEvent {
  type: "attention.requested";
  data?: AttentionRequestedData;
}

export interface AttentionAnsweredDataAnswer {
  option?: string;
  /** capture >= redacted */
  text?: string;
  /** [metadata*] exception (values) */
  values?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `attention.answered` payload (mandatory). */
export interface AttentionAnsweredData {
  answer: AttentionAnsweredDataAnswer;
  by?: string;
  via?: "control" | "oob";
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `attention.answered` event. */
export interface AttentionAnsweredEvent extends AepEvent {
  type: "attention.answered";
  data?: AttentionAnsweredData;
}

/** `attention.resolved` payload (mandatory). */
export interface AttentionResolvedData {
  resolution: "answered" | "auto" | "dismissed";
  latency_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `attention.resolved` event. */
export interface AttentionResolvedEvent extends AepEvent {
  type: "attention.resolved";
  data?: AttentionResolvedData;
}

/** `attention.timeout` payload (mandatory). */
export interface AttentionTimeoutData {
  after_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `attention.timeout` event. */
export interface AttentionTimeoutEvent extends AepEvent {
  type: "attention.timeout";
  data?: AttentionTimeoutData;
}

/** `session.compacted` payload (optional). */
export interface SessionCompactedData {
  trigger?: string;
  strategy?: string;
  estimated_token_count?: number;
  forgotten?: number;
  "gen_ai.usage.input_tokens"?: number;
  "gen_ai.usage.output_tokens"?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `session.compacted` event. */
export interface SessionCompactedEvent extends AepEvent {
  type: "session.compacted";
  data?: SessionCompactedData;
}

/** `run.step.started` payload (optional). */
export interface RunStepStartedData {
  /** capture >= redacted */
  name?: string;
  initial_num_steps?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `run.step.started` event. */
export interface RunStepStartedEvent extends AepEvent {
  type: "run.step.started";
  data?: RunStepStartedData;
}

/** `run.step.finished` payload (optional). */
export interface RunStepFinishedData {
  status?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `run.step.finished` event. */
export interface RunStepFinishedEvent extends AepEvent {
  type: "run.step.finished";
  data?: RunStepFinishedData;
}

/** `progress.status` payload (optional). */
export interface ProgressStatusData {
  /** capture >= redacted */
  message?: string;
  phase?: string;
  percent?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `progress.status` event. */
export interface ProgressStatusEvent extends AepEvent {
  type: "progress.status";
  data?: ProgressStatusData;
}

export interface ProgressTaskPlannedDataTask {
  id?: string;
  /** capture >= redacted */
  title?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `progress.task.planned` payload (optional). */
export interface ProgressTaskPlannedData {
  task?: ProgressTaskPlannedDataTask;
  parent?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `progress.task.planned` event. */
export interface ProgressTaskPlannedEvent extends AepEvent {
  type: "progress.task.planned";
  data?: ProgressTaskPlannedData;
}

export interface ProgressTaskCompletedDataTask {
  id?: string;
  /** capture >= redacted */
  title?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `progress.task.completed` payload (optional). */
export interface ProgressTaskCompletedData {
  task?: ProgressTaskCompletedDataTask;
  status?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `progress.task.completed` event. */
export interface ProgressTaskCompletedEvent extends AepEvent {
  type: "progress.task.completed";
  data?: ProgressTaskCompletedData;
}

export interface ProgressArtifactProducedDataArtifact {
  id?: string;
  /** capture >= redacted */
  name?: string;
  mime?: string;
  bytes?: number;
  /** capture >= redacted */
  uri?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `progress.artifact.produced` payload (optional). */
export interface ProgressArtifactProducedData {
  artifact?: ProgressArtifactProducedDataArtifact;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `progress.artifact.produced` event. */
export interface ProgressArtifactProducedEvent extends AepEvent {
  type: "progress.artifact.produced";
  data?: ProgressArtifactProducedData;
}

export interface DelegationSubagentStartedDataChild {
  session?: string;
  run?: string;
  agent?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `delegation.subagent.started` payload (optional). */
export interface DelegationSubagentStartedData {
  child?: DelegationSubagentStartedDataChild;
  agent_type?: string;
  role?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `delegation.subagent.started` event. */
export interface DelegationSubagentStartedEvent extends AepEvent {
  type: "delegation.subagent.started";
  data?: DelegationSubagentStartedData;
}

export interface DelegationSubagentStoppedDataChild {
  session?: string;
  run?: string;
  agent?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `delegation.subagent.stopped` payload (optional). */
export interface DelegationSubagentStoppedData {
  child?: DelegationSubagentStoppedDataChild;
  agent_type?: string;
  status?: string;
  duration_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `delegation.subagent.stopped` event. */
export interface DelegationSubagentStoppedEvent extends AepEvent {
  type: "delegation.subagent.stopped";
  data?: DelegationSubagentStoppedData;
}

/** `attention.routed` payload (optional). */
export interface AttentionRoutedData {
  to?: string;
  via?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `attention.routed` event. */
export interface AttentionRoutedEvent extends AepEvent {
  type: "attention.routed";
  data?: AttentionRoutedData;
}

/** `agent.presence` payload (optional). */
export interface AgentPresenceData {
  state: "online" | "offline" | "busy";
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `agent.presence` event. */
export interface AgentPresenceEvent extends AepEvent {
  type: "agent.presence";
  data?: AgentPresenceData;
}

/** `agent.idle` payload (optional). */
export interface AgentIdleData {
  since_ms?: number;
  reason?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `agent.idle` event. */
export interface AgentIdleEvent extends AepEvent {
  type: "agent.idle";
  data?: AgentIdleData;
}

/** `agent.health` payload (optional). */
export interface AgentHealthData {
  status: "ok" | "degraded" | "failing";
  /** capture >= redacted */
  detail?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `agent.health` event. */
export interface AgentHealthEvent extends AepEvent {
  type: "agent.health";
  data?: AgentHealthData;
}

/** `agent.heartbeat` payload (optional). */
export interface AgentHeartbeatData {
  tick?: number;
  interval_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `agent.heartbeat` event. */
export interface AgentHeartbeatEvent extends AepEvent {
  type: "agent.heartbeat";
  data?: AgentHeartbeatData;
}

export interface ErrorRaisedDataError {
  type?: string;
  /** capture >= redacted */
  message?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `error.raised` payload (optional). */
export interface ErrorRaisedData {
  error?: ErrorRaisedDataError;
  code?: string;
  fatal?: boolean;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `error.raised` event. */
export interface ErrorRaisedEvent extends AepEvent {
  type: "error.raised";
  data?: ErrorRaisedData;
}

/** `state.snapshot` payload (optional). */
export interface StateSnapshotData {
  /** capture >= redacted */
  state?: Record<string, unknown>;
  key?: string;
  rev?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `state.snapshot` event. */
export interface StateSnapshotEvent extends AepEvent {
  type: "state.snapshot";
  data?: StateSnapshotData;
}

/** `state.delta` payload (optional). */
export interface StateDeltaData {
  /** capture >= redacted */
  delta?: Array<Record<string, unknown>>;
  key?: string;
  rev?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `state.delta` event. */
export interface StateDeltaEvent extends AepEvent {
  type: "state.delta";
  data?: StateDeltaData;
}

/** `resource.retrieval.requested` payload (optional). */
export interface ResourceRetrievalRequestedData {
  /** capture >= redacted */
  query?: string;
  query_digest?: string;
  corpus?: string;
  top_k?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `resource.retrieval.requested` event. */
export interface ResourceRetrievalRequestedEvent extends AepEvent {
  type: "resource.retrieval.requested";
  data?: ResourceRetrievalRequestedData;
}

export interface ResourceRetrievalReturnedDataDocumentsItem {
  id?: string;
  score?: number;
  /** capture >= redacted */
  content_redacted?: string;
  /** capture >= full */
  content?: string;
  metadata?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `resource.retrieval.returned` payload (optional). */
export interface ResourceRetrievalReturnedData {
  documents?: Array<ResourceRetrievalReturnedDataDocumentsItem>;
  count?: number;
  corpus?: string;
  duration_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `resource.retrieval.returned` event. */
export interface ResourceRetrievalReturnedEvent extends AepEvent {
  type: "resource.retrieval.returned";
  data?: ResourceRetrievalReturnedData;
}

export interface ResourceRetrievalRerankedDataInputDocumentsItem {
  id?: string;
  score?: number;
  /** capture >= redacted */
  content_redacted?: string;
  /** capture >= full */
  content?: string;
  metadata?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ResourceRetrievalRerankedDataOutputDocumentsItem {
  id?: string;
  score?: number;
  /** capture >= redacted */
  content_redacted?: string;
  /** capture >= full */
  content?: string;
  metadata?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `resource.retrieval.reranked` payload (optional). */
export interface ResourceRetrievalRerankedData {
  /** capture >= redacted */
  query?: string;
  query_digest?: string;
  model?: string;
  top_k?: number;
  input_documents?: Array<ResourceRetrievalRerankedDataInputDocumentsItem>;
  output_documents?: Array<ResourceRetrievalRerankedDataOutputDocumentsItem>;
  count?: number;
  duration_ms?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `resource.retrieval.reranked` event. */
export interface ResourceRetrievalRerankedEvent extends AepEvent {
  type: "resource.retrieval.reranked";
  data?: ResourceRetrievalRerankedData;
}

export interface ResourceCitationRecordedDataCitationsItemSource {
  id?: string;
  /** capture >= redacted */
  uri?: string;
  /** capture >= redacted */
  title?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ResourceCitationRecordedDataCitationsItemOffsetChar {
  start?: number;
  end?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ResourceCitationRecordedDataCitationsItemOffsetPage {
  page?: number;
  start?: number;
  end?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ResourceCitationRecordedDataCitationsItemOffsetBlock {
  block?: number;
  start?: number;
  end?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ResourceCitationRecordedDataCitationsItemOffset {
  char?: ResourceCitationRecordedDataCitationsItemOffsetChar;
  page?: ResourceCitationRecordedDataCitationsItemOffsetPage;
  block?: ResourceCitationRecordedDataCitationsItemOffsetBlock;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface ResourceCitationRecordedDataCitationsItem {
  source?: ResourceCitationRecordedDataCitationsItemSource;
  /** capture >= redacted */
  cited_text_redacted?: string;
  /** capture >= full */
  cited_text?: string;
  offset?: ResourceCitationRecordedDataCitationsItemOffset;
  document_index?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `resource.citation.recorded` payload (optional). */
export interface ResourceCitationRecordedData {
  citations?: Array<ResourceCitationRecordedDataCitationsItem>;
  count?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `resource.citation.recorded` event. */
export interface ResourceCitationRecordedEvent extends AepEvent {
  type: "resource.citation.recorded";
  data?: ResourceCitationRecordedData;
}

/** `assessment.evaluation.recorded` payload (optional). */
export interface AssessmentEvaluationRecordedData {
  "gen_ai.evaluation.name"?: string;
  "gen_ai.evaluation.score.value"?: number;
  "gen_ai.evaluation.score.label"?: string;
  /** capture >= redacted */
  "gen_ai.evaluation.explanation"?: string;
  evaluator?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `assessment.evaluation.recorded` event. */
export interface AssessmentEvaluationRecordedEvent extends AepEvent {
  type: "assessment.evaluation.recorded";
  data?: AssessmentEvaluationRecordedData;
}

/** `assessment.feedback.received` payload (optional). */
export interface AssessmentFeedbackReceivedData {
  rating?: number;
  label?: string;
  /** capture >= redacted */
  comment?: string;
  /** capture >= redacted */
  correction?: string;
  source?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `assessment.feedback.received` event. */
export interface AssessmentFeedbackReceivedEvent extends AepEvent {
  type: "assessment.feedback.received";
  data?: AssessmentFeedbackReceivedData;
}

export interface AssessmentGuardrailRecordedDataGuardrailCategoriesItem {
  name?: string;
  score?: number;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface AssessmentGuardrailRecordedDataGuardrailDetector {
  name?: string;
  version?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

export interface AssessmentGuardrailRecordedDataGuardrail {
  stage?: "input" | "output";
  verdict?: "allowed" | "flagged" | "blocked" | "modified";
  categories?: Array<AssessmentGuardrailRecordedDataGuardrailCategoriesItem>;
  detector?: AssessmentGuardrailRecordedDataGuardrailDetector;
  /** capture >= redacted */
  explanation?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `assessment.guardrail.recorded` payload (optional). */
export interface AssessmentGuardrailRecordedData {
  guardrail?: AssessmentGuardrailRecordedDataGuardrail;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `assessment.guardrail.recorded` event. */
export interface AssessmentGuardrailRecordedEvent extends AepEvent {
  type: "assessment.guardrail.recorded";
  data?: AssessmentGuardrailRecordedData;
}

export interface ControlAttentionRespondDataAnswer {
  option?: string;
  /** capture >= redacted */
  text?: string;
  /** [metadata*] exception (values) */
  values?: Record<string, unknown>;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** `control.attention.respond` payload (optional). */
export interface ControlAttentionRespondData {
  answer: ControlAttentionRespondDataAnswer;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `control.attention.respond` event. */
export interface ControlAttentionRespondEvent extends AepEvent {
  type: "control.attention.respond";
  data?: ControlAttentionRespondData;
}

/** `control.cancel` payload (optional). */
export interface ControlCancelData {
  scope: "run" | "session";
  /** capture >= redacted */
  reason?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `control.cancel` event. */
export interface ControlCancelEvent extends AepEvent {
  type: "control.cancel";
  data?: ControlCancelData;
}

/** `control.pause` payload: no defined members (an empty open object). */
export interface ControlPauseData {
  [member: string]: unknown;
}

/** A `control.pause` event. */
export interface ControlPauseEvent extends AepEvent {
  type: "control.pause";
  data?: ControlPauseData;
}

/** `control.resume` payload: no defined members (an empty open object). */
export interface ControlResumeData {
  [member: string]: unknown;
}

/** A `control.resume` event. */
export interface ControlResumeEvent extends AepEvent {
  type: "control.resume";
  data?: ControlResumeData;
}

/** `control.accepted` payload: no defined members (an empty open object). */
export interface ControlAcceptedData {
  [member: string]: unknown;
}

/** A `control.accepted` event. */
export interface ControlAcceptedEvent extends AepEvent {
  type: "control.accepted";
  data?: ControlAcceptedData;
}

/** `control.rejected` payload (optional). */
export interface ControlRejectedData {
  reason: "unsupported" | "unauthorized" | "busy" | "refused" | "invalid";
  /** capture >= redacted */
  detail?: string;
  /** Payloads are open: vendor members are allowed (AEP-0002 §5.4). */
  [member: string]: unknown;
}

/** A `control.rejected` event. */
export interface ControlRejectedEvent extends AepEvent {
  type: "control.rejected";
  data?: ControlRejectedData;
}

/** Every registered type with a payload schema, discriminated by `type`. */
export type KnownAepEvent =
  | SessionStartedEvent
  | SessionEndedEvent
  | RunStartedEvent
  | RunFinishedEvent
  | RunFailedEvent
  | RunCancelledEvent
  | ToolRequestedEvent
  | ToolCompletedEvent
  | ToolFailedEvent
  | ToolDeniedEvent
  | AttentionRequestedEvent
  | AttentionAnsweredEvent
  | AttentionResolvedEvent
  | AttentionTimeoutEvent
  | SessionCompactedEvent
  | RunStepStartedEvent
  | RunStepFinishedEvent
  | ProgressStatusEvent
  | ProgressTaskPlannedEvent
  | ProgressTaskCompletedEvent
  | ProgressArtifactProducedEvent
  | DelegationSubagentStartedEvent
  | DelegationSubagentStoppedEvent
  | AttentionRoutedEvent
  | AgentPresenceEvent
  | AgentIdleEvent
  | AgentHealthEvent
  | AgentHeartbeatEvent
  | ErrorRaisedEvent
  | StateSnapshotEvent
  | StateDeltaEvent
  | ResourceRetrievalRequestedEvent
  | ResourceRetrievalReturnedEvent
  | ResourceRetrievalRerankedEvent
  | ResourceCitationRecordedEvent
  | AssessmentEvaluationRecordedEvent
  | AssessmentFeedbackReceivedEvent
  | AssessmentGuardrailRecordedEvent
  | ControlAttentionRespondEvent
  | ControlCancelEvent
  | ControlPauseEvent
  | ControlResumeEvent
  | ControlAcceptedEvent
  | ControlRejectedEvent;

/** Map from registered type name to its payload interface. */
export interface AepPayloadMap {
  "session.started": SessionStartedData;
  "session.ended": SessionEndedData;
  "run.started": RunStartedData;
  "run.finished": RunFinishedData;
  "run.failed": RunFailedData;
  "run.cancelled": RunCancelledData;
  "tool.requested": ToolRequestedData;
  "tool.completed": ToolCompletedData;
  "tool.failed": ToolFailedData;
  "tool.denied": ToolDeniedData;
  "attention.requested": AttentionRequestedData;
  "attention.answered": AttentionAnsweredData;
  "attention.resolved": AttentionResolvedData;
  "attention.timeout": AttentionTimeoutData;
  "session.compacted": SessionCompactedData;
  "run.step.started": RunStepStartedData;
  "run.step.finished": RunStepFinishedData;
  "progress.status": ProgressStatusData;
  "progress.task.planned": ProgressTaskPlannedData;
  "progress.task.completed": ProgressTaskCompletedData;
  "progress.artifact.produced": ProgressArtifactProducedData;
  "delegation.subagent.started": DelegationSubagentStartedData;
  "delegation.subagent.stopped": DelegationSubagentStoppedData;
  "attention.routed": AttentionRoutedData;
  "agent.presence": AgentPresenceData;
  "agent.idle": AgentIdleData;
  "agent.health": AgentHealthData;
  "agent.heartbeat": AgentHeartbeatData;
  "error.raised": ErrorRaisedData;
  "state.snapshot": StateSnapshotData;
  "state.delta": StateDeltaData;
  "resource.retrieval.requested": ResourceRetrievalRequestedData;
  "resource.retrieval.returned": ResourceRetrievalReturnedData;
  "resource.retrieval.reranked": ResourceRetrievalRerankedData;
  "resource.citation.recorded": ResourceCitationRecordedData;
  "assessment.evaluation.recorded": AssessmentEvaluationRecordedData;
  "assessment.feedback.received": AssessmentFeedbackReceivedData;
  "assessment.guardrail.recorded": AssessmentGuardrailRecordedData;
  "control.attention.respond": ControlAttentionRespondData;
  "control.cancel": ControlCancelData;
  "control.pause": ControlPauseData;
  "control.resume": ControlResumeData;
  "control.accepted": ControlAcceptedData;
  "control.rejected": ControlRejectedData;
}

/** All 46 registered core types (registry order, AEP-0002 §4). */
export const AEP_CORE_TYPES = [
  "session.started",
  "session.ended",
  "run.started",
  "run.finished",
  "run.failed",
  "run.cancelled",
  "tool.requested",
  "tool.completed",
  "tool.failed",
  "tool.denied",
  "attention.requested",
  "attention.answered",
  "attention.resolved",
  "attention.timeout",
  "session.compacted",
  "run.step.started",
  "run.step.finished",
  "progress.status",
  "progress.task.planned",
  "progress.task.completed",
  "progress.artifact.produced",
  "delegation.subagent.started",
  "delegation.subagent.stopped",
  "attention.routed",
  "agent.presence",
  "agent.idle",
  "agent.health",
  "agent.heartbeat",
  "error.raised",
  "state.snapshot",
  "state.delta",
  "resource.retrieval.requested",
  "resource.retrieval.returned",
  "resource.retrieval.reranked",
  "resource.citation.recorded",
  "assessment.evaluation.recorded",
  "assessment.feedback.received",
  "assessment.guardrail.recorded",
  "message.user.submitted",
  "message.agent.replied",
  "control.attention.respond",
  "control.cancel",
  "control.pause",
  "control.resume",
  "control.accepted",
  "control.rejected",
] as const;
/** A registered core type name. */
export type AepCoreType = (typeof AEP_CORE_TYPES)[number];
/** The 14 mandatory types a consumer MUST understand (AEP-0002 §4.1). */
export const AEP_MANDATORY_TYPES = [
  "session.started",
  "session.ended",
  "run.started",
  "run.finished",
  "run.failed",
  "run.cancelled",
  "tool.requested",
  "tool.completed",
  "tool.failed",
  "tool.denied",
  "attention.requested",
  "attention.answered",
  "attention.resolved",
  "attention.timeout",
] as const;
