// GENERATED FILE: do not edit. Regenerate with `npm run codegen`.
// Source: schemas/ (envelope, registry/, types/) via scripts/codegen/generate.ts.
// Input digest: sha256:81534306e2a75249b8f28f0933d51294
/** Per-field capture annotation tree of one payload schema (AEP-0002 §5.1). */
export interface CaptureTree {
  /** `x-aep-capture` (default metadata): the lowest capture level at which the member may appear. */
  level: 'metadata' | 'redacted' | 'full';
  /** The [metadata*] exception fields (`x-aep-exception`, AEP-0002 §5.3, AEP-0006). */
  exception?: 'prompt' | 'label' | 'values';
  /** Object members. */
  properties?: Readonly<Record<string, CaptureTree>>;
  /** Array items. */
  items?: CaptureTree;
}

/** One tree per registered type with a payload schema (empty-payload types have `properties: {}`). */
export const CAPTURE_TREES: Readonly<Record<string, CaptureTree>> = {
  "session.started": {"level":"metadata","properties":{"label":{"level":"redacted"},"parent":{"level":"metadata","properties":{"session":{"level":"metadata"},"run":{"level":"metadata"},"agent":{"level":"metadata"}}},"client":{"level":"metadata","properties":{"name":{"level":"metadata"},"version":{"level":"metadata"}}},"gen_ai.request.model":{"level":"metadata"},"cwd":{"level":"redacted"}}},
  "session.ended": {"level":"metadata","properties":{"reason":{"level":"metadata"},"duration_ms":{"level":"metadata"},"runs":{"level":"metadata"}}},
  "run.started": {"level":"metadata","properties":{"trigger":{"level":"metadata"},"prompt":{"level":"redacted"},"gen_ai.usage.input_tokens":{"level":"metadata"},"gen_ai.usage.output_tokens":{"level":"metadata"},"cost":{"level":"metadata","properties":{"currency":{"level":"metadata"},"total":{"level":"metadata"},"prompt":{"level":"metadata"},"completion":{"level":"metadata"},"cache":{"level":"metadata"},"reasoning":{"level":"metadata"}}}}},
  "run.finished": {"level":"metadata","properties":{"duration_ms":{"level":"metadata"},"summary":{"level":"redacted"},"gen_ai.usage.input_tokens":{"level":"metadata"},"gen_ai.usage.output_tokens":{"level":"metadata"},"cost":{"level":"metadata","properties":{"currency":{"level":"metadata"},"total":{"level":"metadata"},"prompt":{"level":"metadata"},"completion":{"level":"metadata"},"cache":{"level":"metadata"},"reasoning":{"level":"metadata"}}}}},
  "run.failed": {"level":"metadata","properties":{"reason":{"level":"metadata"},"error":{"level":"metadata","properties":{"type":{"level":"metadata"},"message":{"level":"redacted"}}},"duration_ms":{"level":"metadata"}}},
  "run.cancelled": {"level":"metadata","properties":{"by":{"level":"metadata"},"reason":{"level":"redacted"},"duration_ms":{"level":"metadata"}}},
  "tool.requested": {"level":"metadata","properties":{"tool":{"level":"metadata","properties":{"name":{"level":"metadata"},"call_id":{"level":"metadata"}}},"args_digest":{"level":"metadata"},"args_redacted":{"level":"redacted"},"args":{"level":"full"}}},
  "tool.completed": {"level":"metadata","properties":{"tool":{"level":"metadata","properties":{"name":{"level":"metadata"},"call_id":{"level":"metadata"}}},"duration_ms":{"level":"metadata"},"status":{"level":"metadata"},"result_digest":{"level":"metadata"},"result_redacted":{"level":"redacted"},"result":{"level":"full"},"gen_ai.usage.input_tokens":{"level":"metadata"},"gen_ai.usage.output_tokens":{"level":"metadata"},"cost":{"level":"metadata","properties":{"currency":{"level":"metadata"},"total":{"level":"metadata"},"prompt":{"level":"metadata"},"completion":{"level":"metadata"},"cache":{"level":"metadata"},"reasoning":{"level":"metadata"}}}}},
  "tool.failed": {"level":"metadata","properties":{"tool":{"level":"metadata","properties":{"name":{"level":"metadata"},"call_id":{"level":"metadata"}}},"error":{"level":"metadata","properties":{"type":{"level":"metadata"},"message":{"level":"redacted"}}},"duration_ms":{"level":"metadata"}}},
  "tool.denied": {"level":"metadata","properties":{"tool":{"level":"metadata","properties":{"name":{"level":"metadata"},"call_id":{"level":"metadata"}}},"by":{"level":"metadata"},"rule":{"level":"metadata"}}},
  "attention.requested": {"level":"metadata","properties":{"kind":{"level":"metadata"},"prompt":{"level":"metadata","exception":"prompt"},"options":{"level":"metadata","items":{"level":"metadata","properties":{"id":{"level":"metadata"},"label":{"level":"metadata","exception":"label"}}}},"fields":{"level":"metadata","items":{"level":"metadata","properties":{"id":{"level":"metadata"},"type":{"level":"metadata"},"label":{"level":"metadata","exception":"label"},"required":{"level":"metadata"},"multi":{"level":"metadata"},"other":{"level":"metadata"},"choices":{"level":"metadata","items":{"level":"metadata","properties":{"id":{"level":"metadata"},"label":{"level":"metadata","exception":"label"}}}},"min":{"level":"metadata"},"max":{"level":"metadata"}}}},"expires_at":{"level":"metadata"},"respond_via":{"level":"metadata","items":{"level":"metadata"}},"context":{"level":"full"}}},
  "attention.answered": {"level":"metadata","properties":{"answer":{"level":"metadata","properties":{"option":{"level":"metadata"},"text":{"level":"redacted"},"values":{"level":"metadata","exception":"values"}}},"by":{"level":"metadata"},"via":{"level":"metadata"}}},
  "attention.resolved": {"level":"metadata","properties":{"resolution":{"level":"metadata"},"latency_ms":{"level":"metadata"}}},
  "attention.timeout": {"level":"metadata","properties":{"after_ms":{"level":"metadata"}}},
  "session.compacted": {"level":"metadata","properties":{"trigger":{"level":"metadata"},"strategy":{"level":"metadata"},"estimated_token_count":{"level":"metadata"},"forgotten":{"level":"metadata"},"gen_ai.usage.input_tokens":{"level":"metadata"},"gen_ai.usage.output_tokens":{"level":"metadata"}}},
  "run.step.started": {"level":"metadata","properties":{"name":{"level":"redacted"},"initial_num_steps":{"level":"metadata"}}},
  "run.step.finished": {"level":"metadata","properties":{"status":{"level":"metadata"}}},
  "progress.status": {"level":"metadata","properties":{"message":{"level":"redacted"},"phase":{"level":"metadata"},"percent":{"level":"metadata"}}},
  "progress.task.planned": {"level":"metadata","properties":{"task":{"level":"metadata","properties":{"id":{"level":"metadata"},"title":{"level":"redacted"}}},"parent":{"level":"metadata"}}},
  "progress.task.completed": {"level":"metadata","properties":{"task":{"level":"metadata","properties":{"id":{"level":"metadata"},"title":{"level":"redacted"}}},"status":{"level":"metadata"}}},
  "progress.artifact.produced": {"level":"metadata","properties":{"artifact":{"level":"metadata","properties":{"id":{"level":"metadata"},"name":{"level":"redacted"},"mime":{"level":"metadata"},"bytes":{"level":"metadata"},"uri":{"level":"redacted"}}}}},
  "delegation.subagent.started": {"level":"metadata","properties":{"child":{"level":"metadata","properties":{"session":{"level":"metadata"},"run":{"level":"metadata"},"agent":{"level":"metadata"}}},"agent_type":{"level":"metadata"},"role":{"level":"metadata"}}},
  "delegation.subagent.stopped": {"level":"metadata","properties":{"child":{"level":"metadata","properties":{"session":{"level":"metadata"},"run":{"level":"metadata"},"agent":{"level":"metadata"}}},"agent_type":{"level":"metadata"},"status":{"level":"metadata"},"duration_ms":{"level":"metadata"}}},
  "attention.routed": {"level":"metadata","properties":{"to":{"level":"metadata"},"via":{"level":"metadata"}}},
  "agent.presence": {"level":"metadata","properties":{"state":{"level":"metadata"}}},
  "agent.idle": {"level":"metadata","properties":{"since_ms":{"level":"metadata"},"reason":{"level":"metadata"}}},
  "agent.health": {"level":"metadata","properties":{"status":{"level":"metadata"},"detail":{"level":"redacted"}}},
  "agent.heartbeat": {"level":"metadata","properties":{"tick":{"level":"metadata"},"interval_ms":{"level":"metadata"}}},
  "error.raised": {"level":"metadata","properties":{"error":{"level":"metadata","properties":{"type":{"level":"metadata"},"message":{"level":"redacted"}}},"code":{"level":"metadata"},"fatal":{"level":"metadata"}}},
  "state.snapshot": {"level":"metadata","properties":{"state":{"level":"redacted"},"key":{"level":"metadata"},"rev":{"level":"metadata"}}},
  "state.delta": {"level":"metadata","properties":{"delta":{"level":"redacted","items":{"level":"metadata"}},"key":{"level":"metadata"},"rev":{"level":"metadata"}}},
  "resource.retrieval.requested": {"level":"metadata","properties":{"query":{"level":"redacted"},"query_digest":{"level":"metadata"},"corpus":{"level":"metadata"},"top_k":{"level":"metadata"}}},
  "resource.retrieval.returned": {"level":"metadata","properties":{"documents":{"level":"metadata","items":{"level":"metadata","properties":{"id":{"level":"metadata"},"score":{"level":"metadata"},"content_redacted":{"level":"redacted"},"content":{"level":"full"},"metadata":{"level":"metadata"}}}},"count":{"level":"metadata"},"corpus":{"level":"metadata"},"duration_ms":{"level":"metadata"}}},
  "resource.retrieval.reranked": {"level":"metadata","properties":{"query":{"level":"redacted"},"query_digest":{"level":"metadata"},"model":{"level":"metadata"},"top_k":{"level":"metadata"},"input_documents":{"level":"metadata","items":{"level":"metadata","properties":{"id":{"level":"metadata"},"score":{"level":"metadata"},"content_redacted":{"level":"redacted"},"content":{"level":"full"},"metadata":{"level":"metadata"}}}},"output_documents":{"level":"metadata","items":{"level":"metadata","properties":{"id":{"level":"metadata"},"score":{"level":"metadata"},"content_redacted":{"level":"redacted"},"content":{"level":"full"},"metadata":{"level":"metadata"}}}},"count":{"level":"metadata"},"duration_ms":{"level":"metadata"}}},
  "resource.citation.recorded": {"level":"metadata","properties":{"citations":{"level":"metadata","items":{"level":"metadata","properties":{"source":{"level":"metadata","properties":{"id":{"level":"metadata"},"uri":{"level":"redacted"},"title":{"level":"redacted"}}},"cited_text_redacted":{"level":"redacted"},"cited_text":{"level":"full"},"offset":{"level":"metadata","properties":{"char":{"level":"metadata","properties":{"start":{"level":"metadata"},"end":{"level":"metadata"}}},"page":{"level":"metadata","properties":{"page":{"level":"metadata"},"start":{"level":"metadata"},"end":{"level":"metadata"}}},"block":{"level":"metadata","properties":{"block":{"level":"metadata"},"start":{"level":"metadata"},"end":{"level":"metadata"}}}}},"document_index":{"level":"metadata"}}}},"count":{"level":"metadata"}}},
  "assessment.evaluation.recorded": {"level":"metadata","properties":{"gen_ai.evaluation.name":{"level":"metadata"},"gen_ai.evaluation.score.value":{"level":"metadata"},"gen_ai.evaluation.score.label":{"level":"metadata"},"gen_ai.evaluation.explanation":{"level":"redacted"},"evaluator":{"level":"metadata"}}},
  "assessment.feedback.received": {"level":"metadata","properties":{"rating":{"level":"metadata"},"label":{"level":"metadata"},"comment":{"level":"redacted"},"correction":{"level":"redacted"},"source":{"level":"metadata"}}},
  "assessment.guardrail.recorded": {"level":"metadata","properties":{"guardrail":{"level":"metadata","properties":{"stage":{"level":"metadata"},"verdict":{"level":"metadata"},"categories":{"level":"metadata","items":{"level":"metadata","properties":{"name":{"level":"metadata"},"score":{"level":"metadata"}}}},"detector":{"level":"metadata","properties":{"name":{"level":"metadata"},"version":{"level":"metadata"}}},"explanation":{"level":"redacted"}}}}},
  "control.attention.respond": {"level":"metadata","properties":{"answer":{"level":"metadata","properties":{"option":{"level":"metadata"},"text":{"level":"redacted"},"values":{"level":"metadata","exception":"values"}}}}},
  "control.cancel": {"level":"metadata","properties":{"scope":{"level":"metadata"},"reason":{"level":"redacted"}}},
  "control.pause": {"level":"metadata","properties":{}},
  "control.resume": {"level":"metadata","properties":{}},
  "control.accepted": {"level":"metadata","properties":{}},
  "control.rejected": {"level":"metadata","properties":{"reason":{"level":"metadata"},"detail":{"level":"redacted"}}},
};
