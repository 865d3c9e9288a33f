// Public API of @aep/protocol: the pure AEP 0.1 core (no I/O; loads in a browser).
// Named exports only (no `export *`). Several areas add to this file: append your export lines
// at the end (never rewrite the file), one `export { … } from './x.js';` per module.
export { CAPTURE_LEVELS, DEFAULT_CAPTURE, SEVERITIES, DEFAULT_SEVERITY, captureRank, severityRank, isCaptureLevel, isSeverity } from './levels.js';
export type { CaptureLevel, Severity } from './levels.js';
export type { Issue } from './issue.js';
export { AepError } from './errors.js';
export { elicitationToForm, formValuesToElicitationContent, validateElicitationContent } from './elicitation.js';
export type { ElicitationFormChoice, ElicitationFormField, ElicitationFormData, ElicitationValueKind, ElicitationFieldMap, ElicitationToFormOptions, ElicitationToFormResult, ElicitationContentValue, FormValuesToContentOptions } from './elicitation.js';
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
export { TYPE_REGISTRY, CATEGORY_REGISTRY, CAPTURE_ORDER, SEVERITY_ORDER, SEVERITY_OTLP, SEVERITY_OCSF, NACK_REASONS, CORE_ATTRIBUTES, REQUIRED_ATTRIBUTES, TYPE_PATTERN, ATTRIBUTE_NAME_PATTERN } from './generated/registry.js';
export type { RegistryType, RegistryCategory } from './generated/registry.js';
export { isDateTime, isUri } from './schema-runtime.js';
export { sha256, sha256Hex, toHex, canonicalJson, digest } from './sha256.js';
export { redact, redactValue, isCredentialKey, REDACTED_SECRET, REDACTED_PII, MIN_SECRET_VALUE_LENGTH } from './redact.js';
export type { RedactOptions } from './redact.js';
export { validateFormAnswer, indexFields, choiceIds, FORM_RULES } from './forms.js';
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
