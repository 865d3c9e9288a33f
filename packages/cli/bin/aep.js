#!/usr/bin/env node
// The `aep` executable. A committed shim (not the compiled file itself) so that npm can link it
// into node_modules/.bin at install time, before `prepare` has built dist/.
import '../dist/bin.js';
