// GENERATED FILE: do not edit. Regenerate with `npm run codegen`.
// Source: schemas/ (envelope, registry/, types/) via scripts/codegen/generate.ts.
// Input digest: sha256:81534306e2a75249b8f28f0933d51294
/** One row of `schemas/registry/types.json` (AEP-0002 §4). */
export interface RegistryType {
  type: string;
  category: string;
  status: 'mandatory' | 'optional' | 'reserved' | 'deprecated';
  scope: 'session' | 'agent' | 'command';
  /** payload schema file under schemas/types/, or null */
  schema: string | null;
  summary: string;
}
/** The type registry, in registry order. */
export const TYPE_REGISTRY: readonly RegistryType[] = [
  {
    "type": "session.started",
    "category": "session",
    "status": "mandatory",
    "scope": "session",
    "schema": "session.started.schema.json",
    "summary": "session lifecycle start; lineage and client info"
  },
  {
    "type": "session.ended",
    "category": "session",
    "status": "mandatory",
    "scope": "session",
    "schema": "session.ended.schema.json",
    "summary": "session terminal"
  },
  {
    "type": "run.started",
    "category": "run",
    "status": "mandatory",
    "scope": "session",
    "schema": "run.started.schema.json",
    "summary": "an activation (turn, task, job) started"
  },
  {
    "type": "run.finished",
    "category": "run",
    "status": "mandatory",
    "scope": "session",
    "schema": "run.finished.schema.json",
    "summary": "run success terminal"
  },
  {
    "type": "run.failed",
    "category": "run",
    "status": "mandatory",
    "scope": "session",
    "schema": "run.failed.schema.json",
    "summary": "run failure terminal (including rejection)"
  },
  {
    "type": "run.cancelled",
    "category": "run",
    "status": "mandatory",
    "scope": "session",
    "schema": "run.cancelled.schema.json",
    "summary": "run cancelled by user, control or policy"
  },
  {
    "type": "tool.requested",
    "category": "tool",
    "status": "mandatory",
    "scope": "session",
    "schema": "tool.requested.schema.json",
    "summary": "a tool call is about to execute"
  },
  {
    "type": "tool.completed",
    "category": "tool",
    "status": "mandatory",
    "scope": "session",
    "schema": "tool.completed.schema.json",
    "summary": "a tool call completed"
  },
  {
    "type": "tool.failed",
    "category": "tool",
    "status": "mandatory",
    "scope": "session",
    "schema": "tool.failed.schema.json",
    "summary": "a tool call failed"
  },
  {
    "type": "tool.denied",
    "category": "tool",
    "status": "mandatory",
    "scope": "session",
    "schema": "tool.denied.schema.json",
    "summary": "a tool call was blocked by policy, setting or runtime (no human asked)"
  },
  {
    "type": "attention.requested",
    "category": "attention",
    "status": "mandatory",
    "scope": "session",
    "schema": "attention.requested.schema.json",
    "summary": "a human is needed (permission, input, form ...)"
  },
  {
    "type": "attention.answered",
    "category": "attention",
    "status": "mandatory",
    "scope": "session",
    "schema": "attention.answered.schema.json",
    "summary": "a response to an attention request was applied"
  },
  {
    "type": "attention.resolved",
    "category": "attention",
    "status": "mandatory",
    "scope": "session",
    "schema": "attention.resolved.schema.json",
    "summary": "an attention request was closed"
  },
  {
    "type": "attention.timeout",
    "category": "attention",
    "status": "mandatory",
    "scope": "session",
    "schema": "attention.timeout.schema.json",
    "summary": "an attention request expired unanswered (terminal)"
  },
  {
    "type": "session.compacted",
    "category": "session",
    "status": "optional",
    "scope": "session",
    "schema": "session.compacted.schema.json",
    "summary": "context compaction finished"
  },
  {
    "type": "run.step.started",
    "category": "run",
    "status": "optional",
    "scope": "session",
    "schema": "run.step.started.schema.json",
    "summary": "a step of a run started (envelope step)"
  },
  {
    "type": "run.step.finished",
    "category": "run",
    "status": "optional",
    "scope": "session",
    "schema": "run.step.finished.schema.json",
    "summary": "a step of a run finished"
  },
  {
    "type": "progress.status",
    "category": "progress",
    "status": "optional",
    "scope": "session",
    "schema": "progress.status.schema.json",
    "summary": "intermediate status"
  },
  {
    "type": "progress.task.planned",
    "category": "progress",
    "status": "optional",
    "scope": "session",
    "schema": "progress.task.planned.schema.json",
    "summary": "a plan item was planned"
  },
  {
    "type": "progress.task.completed",
    "category": "progress",
    "status": "optional",
    "scope": "session",
    "schema": "progress.task.completed.schema.json",
    "summary": "a plan item was completed"
  },
  {
    "type": "progress.artifact.produced",
    "category": "progress",
    "status": "optional",
    "scope": "session",
    "schema": "progress.artifact.produced.schema.json",
    "summary": "an artifact was produced"
  },
  {
    "type": "delegation.subagent.started",
    "category": "delegation",
    "status": "optional",
    "scope": "session",
    "schema": "delegation.subagent.started.schema.json",
    "summary": "a subagent started"
  },
  {
    "type": "delegation.subagent.stopped",
    "category": "delegation",
    "status": "optional",
    "scope": "session",
    "schema": "delegation.subagent.stopped.schema.json",
    "summary": "a subagent stopped"
  },
  {
    "type": "attention.routed",
    "category": "attention",
    "status": "optional",
    "scope": "session",
    "schema": "attention.routed.schema.json",
    "summary": "a router handed an attention request to a human-facing channel (foreign emitter)"
  },
  {
    "type": "agent.presence",
    "category": "agent",
    "status": "optional",
    "scope": "agent",
    "schema": "agent.presence.schema.json",
    "summary": "emitter presence"
  },
  {
    "type": "agent.idle",
    "category": "agent",
    "status": "optional",
    "scope": "agent",
    "schema": "agent.idle.schema.json",
    "summary": "emitter is idle"
  },
  {
    "type": "agent.health",
    "category": "agent",
    "status": "optional",
    "scope": "agent",
    "schema": "agent.health.schema.json",
    "summary": "emitter health"
  },
  {
    "type": "agent.heartbeat",
    "category": "agent",
    "status": "optional",
    "scope": "agent",
    "schema": "agent.heartbeat.schema.json",
    "summary": "emitter liveness tick"
  },
  {
    "type": "error.raised",
    "category": "error",
    "status": "optional",
    "scope": "session",
    "schema": "error.raised.schema.json",
    "summary": "a fault outside tool and run terminals"
  },
  {
    "type": "state.snapshot",
    "category": "state",
    "status": "optional",
    "scope": "session",
    "schema": "state.snapshot.schema.json",
    "summary": "agent-owned state snapshot"
  },
  {
    "type": "state.delta",
    "category": "state",
    "status": "optional",
    "scope": "session",
    "schema": "state.delta.schema.json",
    "summary": "agent-owned state delta (JSON Patch)"
  },
  {
    "type": "resource.retrieval.requested",
    "category": "resource",
    "status": "optional",
    "scope": "session",
    "schema": "resource.retrieval.requested.schema.json",
    "summary": "retrieval requested (experimental)"
  },
  {
    "type": "resource.retrieval.returned",
    "category": "resource",
    "status": "optional",
    "scope": "session",
    "schema": "resource.retrieval.returned.schema.json",
    "summary": "retrieval returned documents (experimental)"
  },
  {
    "type": "resource.retrieval.reranked",
    "category": "resource",
    "status": "optional",
    "scope": "session",
    "schema": "resource.retrieval.reranked.schema.json",
    "summary": "retrieved documents were reranked (experimental)"
  },
  {
    "type": "resource.citation.recorded",
    "category": "resource",
    "status": "optional",
    "scope": "session",
    "schema": "resource.citation.recorded.schema.json",
    "summary": "answer-side citations (experimental)"
  },
  {
    "type": "assessment.evaluation.recorded",
    "category": "assessment",
    "status": "optional",
    "scope": "session",
    "schema": "assessment.evaluation.recorded.schema.json",
    "summary": "an evaluation of work (experimental, AEP-0009)"
  },
  {
    "type": "assessment.feedback.received",
    "category": "assessment",
    "status": "optional",
    "scope": "session",
    "schema": "assessment.feedback.received.schema.json",
    "summary": "human feedback about work (experimental, AEP-0009)"
  },
  {
    "type": "assessment.guardrail.recorded",
    "category": "assessment",
    "status": "optional",
    "scope": "session",
    "schema": "assessment.guardrail.recorded.schema.json",
    "summary": "a content-safety verdict (experimental, AEP-0009)"
  },
  {
    "type": "message.user.submitted",
    "category": "message",
    "status": "reserved",
    "scope": "session",
    "schema": null,
    "summary": "reserved name (no schema in 0.1)"
  },
  {
    "type": "message.agent.replied",
    "category": "message",
    "status": "reserved",
    "scope": "session",
    "schema": null,
    "summary": "reserved name (no schema in 0.1)"
  },
  {
    "type": "control.attention.respond",
    "category": "control",
    "status": "optional",
    "scope": "command",
    "schema": "control.attention.respond.schema.json",
    "summary": "command: answer an attention request (experimental control profile)"
  },
  {
    "type": "control.cancel",
    "category": "control",
    "status": "optional",
    "scope": "command",
    "schema": "control.cancel.schema.json",
    "summary": "command: cancel a run or the session"
  },
  {
    "type": "control.pause",
    "category": "control",
    "status": "optional",
    "scope": "command",
    "schema": "control.pause.schema.json",
    "summary": "command: pause the session"
  },
  {
    "type": "control.resume",
    "category": "control",
    "status": "optional",
    "scope": "command",
    "schema": "control.resume.schema.json",
    "summary": "command: resume the session"
  },
  {
    "type": "control.accepted",
    "category": "control",
    "status": "optional",
    "scope": "session",
    "schema": "control.accepted.schema.json",
    "summary": "ack: the target will attempt the command"
  },
  {
    "type": "control.rejected",
    "category": "control",
    "status": "optional",
    "scope": "session",
    "schema": "control.rejected.schema.json",
    "summary": "nack: the target will not attempt the command"
  }
];
/** One row of `schemas/registry/categories.json` (AEP-0002 §3). */
export interface RegistryCategory {
  name: string;
  scope: string;
  summary: string;
}
/** The 13 categories plus the `x` vendor namespace (AEP-0002 §3). */
export const CATEGORY_REGISTRY: readonly RegistryCategory[] = [
  {
    "name": "agent",
    "scope": "agent",
    "summary": "emitter presence, health, liveness"
  },
  {
    "name": "session",
    "scope": "session",
    "summary": "conversation / work-unit lifecycle"
  },
  {
    "name": "run",
    "scope": "session",
    "summary": "activation (turn/task/job) lifecycle and steps"
  },
  {
    "name": "progress",
    "scope": "session",
    "summary": "intermediate status, plans, artifacts"
  },
  {
    "name": "tool",
    "scope": "session",
    "summary": "tool/capability invocation lifecycle"
  },
  {
    "name": "delegation",
    "scope": "session",
    "summary": "subagent lifecycle"
  },
  {
    "name": "attention",
    "scope": "session",
    "summary": "moments that need a human (AEP-0002 §7)"
  },
  {
    "name": "resource",
    "scope": "session",
    "summary": "external resources the agent touches (experimental)"
  },
  {
    "name": "error",
    "scope": "session",
    "summary": "faults outside the tool and run terminal events"
  },
  {
    "name": "state",
    "scope": "session",
    "summary": "agent-owned state snapshots and deltas"
  },
  {
    "name": "assessment",
    "scope": "session",
    "summary": "evaluations and human feedback about work (AEP-0009, experimental)"
  },
  {
    "name": "message",
    "scope": "session",
    "summary": "conversational content; names reserved only"
  },
  {
    "name": "control",
    "scope": "session",
    "summary": "commands sent to an emitter, plus its acknowledgements (AEP-0004, experimental)"
  },
  {
    "name": "x",
    "scope": "any",
    "summary": "vendor namespace x.{vendor}.{category}.{rest}"
  }
];
/** Capture order from `capture.json` (index = rank, AEP-0001 §8.2). */
export const CAPTURE_ORDER = ["none","metadata","redacted","full"] as const;
/** Severity order from `severity.json` (index = rank, AEP-0001 §8.1). */
export const SEVERITY_ORDER = ["debug","info","notice","warning","error","critical"] as const;
/** OTLP severity mapping from `severity.json`. */
export const SEVERITY_OTLP: Readonly<Record<string, { severity_text: string; severity_number: number }>> = {
  "debug": {
    "severity_text": "DEBUG",
    "severity_number": 5
  },
  "info": {
    "severity_text": "INFO",
    "severity_number": 9
  },
  "notice": {
    "severity_text": "INFO2",
    "severity_number": 10
  },
  "warning": {
    "severity_text": "WARN",
    "severity_number": 13
  },
  "error": {
    "severity_text": "ERROR",
    "severity_number": 17
  },
  "critical": {
    "severity_text": "FATAL",
    "severity_number": 21
  }
};
/** OCSF `severity_id` mapping from `severity.json`. */
export const SEVERITY_OCSF: Readonly<Record<string, { severity_id: number }>> = {
  "debug": {
    "severity_id": 1
  },
  "info": {
    "severity_id": 1
  },
  "notice": {
    "severity_id": 2
  },
  "warning": {
    "severity_id": 3
  },
  "error": {
    "severity_id": 4
  },
  "critical": {
    "severity_id": 5
  }
};
/** Nack reasons on the wire (`nack-reasons.json`, AEP-0004 §3); `timeout` is sender-side only. */
export const NACK_REASONS = ["unsupported","unauthorized","busy","refused","invalid"] as const;
/** The 16 core context attributes plus `data` (AEP-0001 §5.1): never usable as extension names. */
export const CORE_ATTRIBUTES = ["aep","id","type","subject","time","source","agent","session","run","step","seq","epoch","cause","traceparent","severity","capture","data"] as const;
/** Attributes the envelope requires on every event (AEP-0001 §5.1). */
export const REQUIRED_ATTRIBUTES = ["aep","id","type","time","source","agent"] as const;
/** The envelope `type` grammar (AEP-0001 §6), as in the schema. */
export const TYPE_PATTERN = "^(?:(?:agent|session|run|progress|tool|delegation|attention|resource|error|state|assessment|message|control)(?:\\.[a-z0-9_]+)+|x\\.[a-z0-9_-]+\\.[a-z0-9_]+(?:\\.[a-z0-9_]+)+)$";
/** Every top-level key, core or extension (AEP-0001 §5.4). */
export const ATTRIBUTE_NAME_PATTERN = "^[a-z0-9]{1,20}$";
