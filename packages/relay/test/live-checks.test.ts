// The live checker probes (live-checks.suite.ts) against the SQLite / in-memory relay.
import { startRelay } from '@aep/relay';
import { liveCheckSuite } from './live-checks.suite.js';

liveCheckSuite('', async (opts) => [await startRelay(opts)]);
