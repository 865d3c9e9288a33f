// The relay process's scavenge tuning (issue 19; packages/relay/src/gc.ts), applied by the two
// commands that run a relay (`aep relay`, `aep up`) before it starts.
import type * as Relay from '@aep/relay';
import { CliError } from './errors.js';
import { EXIT } from './exit.js';

/** Apply `$AEP_RELAY_SCAVENGE` (auto by default); a value other than auto/single/parallel is a usage error. */
export function tuneRelayGc(relay: Pick<typeof Relay, 'tuneGc' | 'RelayOptionError'>): string {
  try {
    const mode = relay.tuneGc();
    return mode === 'single'
      ? 'one task per scavenge (AEP_RELAY_SCAVENGE=parallel: V8 default)'
      : "V8's scavenge setting (AEP_RELAY_SCAVENGE=single: one task)";
  } catch (err) {
    if (err instanceof relay.RelayOptionError) throw new CliError('AEP_CLI_BAD_OPTION', err.message, EXIT.USAGE);
    throw err;
  }
}
