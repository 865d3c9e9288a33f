// Errors of the live bridges (docs/errors.md "Bridges"). Local family: never sent on the wire,
// except by the CloudEvents receiver, whose HTTP error bodies carry their own AEP_CE_* codes.

/** Stable codes of the live bridges. */
export type BridgeNodeErrorCode = 'AEP_BRIDGE_STATE' | 'AEP_BRIDGE_REFUSED' | 'AEP_BRIDGE_OPTION' | 'AEP_BRIDGE_RELAY';

/** A live bridge failure with a stable code and a message naming the cause (never a token). */
export class BridgeNodeError extends Error {
  readonly code: BridgeNodeErrorCode;
  constructor(code: BridgeNodeErrorCode, message: string) {
    super(message);
    this.name = 'BridgeNodeError';
    this.code = code;
  }
}
