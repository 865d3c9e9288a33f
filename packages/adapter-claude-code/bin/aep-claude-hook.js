#!/usr/bin/env node
// The `aep-claude-hook` command-hook entry. A committed shim so npm links it into
// node_modules/.bin at install time, before `prepare` has built dist/hook.js.
import '../dist/hook.js';
