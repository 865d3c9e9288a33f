import type { Command } from 'commander';
import { register as validate } from './validate.js';
import { register as downlevel } from './downlevel.js';
import { register as redact } from './redact.js';
import { register as match } from './match.js';
import { register as form } from './form.js';
import { register as relay } from './relay.js';
import { register as up } from './up.js';
import { register as tail } from './tail.js';
import { register as inbox } from './inbox.js';
import { register as respond } from './respond.js';
import { register as answer } from './answer.js';
import { register as demo } from './demo.js';
import { register as claudeCode } from './claude-code.js';
import { register as mcp } from './mcp.js';
import { register as delegate } from './delegate.js';
import { registerCancel as cancel, registerPause as pause, registerResume as resume } from './steer.js';
import { register as notify } from './notify.js';
import { register as ce } from './ce.js';
import { register as otlp } from './otlp.js';
import { register as ocsf } from './ocsf.js';
import { register as token } from './token.js';

/** Registers every subcommand. Each module owns exactly one top-level command. */
export function registerAll(program: Command): void {
  up(program);
  relay(program);
  validate(program);
  downlevel(program);
  redact(program);
  match(program);
  form(program);
  tail(program);
  inbox(program);
  respond(program);
  answer(program);
  cancel(program);
  pause(program);
  resume(program);
  demo(program);
  claudeCode(program);
  mcp(program);
  delegate(program);
  notify(program);
  ce(program);
  otlp(program);
  ocsf(program);
  token(program);
}
