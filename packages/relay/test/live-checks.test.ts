// The live checker probes (support/live-checks.ts) against the SQLite / in-memory relay.
import { startRelay } from '@aep/relay';
import { liveCheckSuite } from './support/live-checks.js';

liveCheckSuite('', async (opts) => [await startRelay(opts)]);
