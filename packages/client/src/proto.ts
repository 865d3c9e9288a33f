// The protocol functions this SDK relies on, imported in one place (all from @aep/protocol;
// nothing here is reimplemented).
export { isCommandType, validateFormAnswer, gateAnswer, buildAttentionRequestData, mapTextAnswer, redact, downlevel, createEmitter } from '@aep/protocol';
export type { EventBuilder, RedactOptions } from '@aep/protocol';
