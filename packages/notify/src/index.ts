// Public API of @aep/notify: named exports only (no `export *`).
export { startNotifier, requestRoute, tracksOf } from './notifier.js';
export type { Notifier, NotifierOptions, SendRecord, RequestStatus } from './notifier.js';
export { dryRun } from './dryrun.js';
export type { DryRunItem, DryRunOptions } from './dryrun.js';
export {
  parseConfig,
  validateConfig,
  ConfigError,
  parseDuration,
  parseClock,
  parseQuietFlag,
  parseListen,
  validTimeZone,
  DEFAULT_ACTION_TTL_MS,
} from './config.js';
export type {
  NotifyConfig,
  Channel,
  ChannelType,
  NtfyChannel,
  WebhookChannel,
  PushChannel,
  Rule,
  Escalation,
  QuietWindow,
  ActionsConfig,
  ConfigIssue,
} from './config.js';
export { compose, composeEvent, ident } from './compose.js';
export type { Composed, ComposeOptions, ActionSpec, RequestEvent } from './compose.js';
export { planSends, quietEnd, isQuiet, inWindow, wallClock } from './plan.js';
export type { PlannedSend, TrackTiming } from './plan.js';
export { LinkSigner } from './links.js';
export type { LinkClaims, LinkRefusal } from './links.js';
export { NtfySender, WebhookSender, PushSender, channelSender, webhookSignature, slackEscape, readVapidFile } from './channels.js';
export type { ChannelSender, ChannelContext, Outgoing, Delivery, VapidKeys } from './channels.js';
export { ensureVapidKeys, vapidFile } from './vapid.js';
export { configFromFlags, prepareUpNotify } from './setup.js';
export type { ChannelFlags, UpNotify } from './setup.js';
export { parseWithPositions, JsonPosError } from './jsonpos.js';
