// Public API of @aep/bridges (root entry): the pure AEP-0005 mappings. No I/O and no `node:`
// import, so it loads in a browser (pinned by test/browser-safe.test.ts). The live exporters and
// the CloudEvents receiver are Node-only: `@aep/bridges/node`. Named exports only.
export {
  encodeCloudEvent,
  decodeCloudEvent,
  CE_TYPE_PREFIX,
  CE_SPECVERSION,
  CE_STRUCTURED_MEDIA_TYPE,
  CE_BATCH_MEDIA_TYPE,
  CE_ATTRIBUTE_MAP,
  CE_RESERVED_NAMES,
} from './ce.js';
export type { CloudEvent, AepEventObject } from './ce.js';
export { toOtlpLogRecord, otlpAnyValue, otlpKeyValues, otlpJsonLogRecord, otlpExportRequest, checkMaxCapture, OTLP_SCOPE } from './otlp.js';
export type { OtlpOptions, OtlpLogRecord, JsonValue, OtlpAnyValue, OtlpKeyValue, OtlpJsonLogRecord, OtlpExportLogsRequest } from './otlp.js';
export { toOcsfRecord, uriHost, OCSF_CLASSES, OCSF_VERSION } from './ocsf.js';
export type { OcsfOptions, OcsfRecord, OcsfClassRow } from './ocsf.js';
export { rfc3339ToEpochNanos, rfc3339ToEpochTime, unixNanoString, epochMillis } from './time.js';
export type { EpochTime } from './time.js';
export { survivingPayload } from './capture.js';
export { BRIDGE_RULES } from './result.js';
export type { BridgeResult, BridgeIssue, BridgeDiagnostic, BridgeErrorCode, BridgeRuleId } from './result.js';
