// Public API of @aep/protocol: the pure AEP 0.1 core (no I/O; loads in a browser).
// Named exports only (no `export *`). Several areas add to this file: append your export lines
// at the end (never rewrite the file), one `export { … } from './x.js';` per module.
export { CAPTURE_LEVELS, DEFAULT_CAPTURE, SEVERITIES, DEFAULT_SEVERITY, captureRank, severityRank, isCaptureLevel, isSeverity } from './levels.js';
export type { CaptureLevel, Severity } from './levels.js';
export type { Issue } from './issue.js';
export { AepError } from './errors.js';
export { elicitationToForm, formValuesToElicitationContent, validateElicitationContent } from './elicitation.js';
export type { ElicitationFormChoice, ElicitationFormField, ElicitationFormData, ElicitationValueKind, ElicitationFieldMap, ElicitationToFormOptions, ElicitationToFormResult, ElicitationContentValue, FormValuesToContentOptions } from './elicitation.js';
