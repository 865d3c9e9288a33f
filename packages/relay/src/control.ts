// Control routing (AEP-0004 §4): a command from a WebSocket reaches at most one
// target, or the sender gets a connection-scoped refusal frame that never enters the history.
import { isRemote, type CommandTarget } from './backend.js';
import type { RelayCore } from './core.js';
import type { FrameErrorCode } from './errors.js';
import type { Incoming } from './ingest.js';
import { isObject } from './util.js';
import type { WsConn } from './ws.js';

/** Routes commands received on WebSocket connections. */
export class ControlRouter {
  constructor(private readonly core: RelayCore) {}

  /** Route one valid command Event (`text` = the received bytes, forwarded as is, §4.4). */
  route(conn: WsConn, inc: Incoming, text: string): void {
    const ev = inc.event;
    const id = ev['id'] as string;
    const type = ev['type'] as string;
    const session = ev['session'] as string;
    const refuse = (code: FrameErrorCode, detail: string) => {
      this.core.counters.commandsRefused++;
      conn.error(code, detail, { cause: id });
    };
    if (!this.core.auth.required) return refuse('unauthorized', 'this relay runs without a token (observe-only): commands are refused (AEP-0004 §4.1)');
    const principal = conn.principal;
    if (!principal.authenticated) return refuse('unauthorized', 'commands need an authenticated connection (AEP-0004 §4.1)');
    if (!principal.valid()) return refuse('unauthorized', 'the token was revoked or has expired');
    const isRespond = type === 'control.attention.respond';
    const bound = isRespond ? this.core.requests.get(session, ev['subject']) : undefined;
    // Deployment ACL (AEP-0004 §4.3, contract C7): answers need `answer`, permission answers
    // `permit` (the relay knows the kind from the request it holds; unknown: both), steering `steer`.
    const agent = bound?.agent ?? this.core.sessionAgent(session);
    const ctx = { agent, session, kind: bound?.kind };
    const needs: Array<'answer' | 'permit' | 'steer'> = !isRespond
      ? ['steer']
      : bound?.kind === 'permission'
        ? ['permit']
        : bound?.kind !== undefined
          ? ['answer']
          : ['answer', 'permit'];
    for (const n of needs) {
      const missing = principal.check(n, ctx);
      if (missing) {
        const why =
          isRespond && bound?.kind === undefined && n === 'permit'
            ? ` (the relay does not hold request ${String(ev['subject']).slice(0, 200)}: it may be a permission request)`
            : '';
        return refuse('unauthorized', `token lacks scope ${missing}${why}`);
      }
    }
    // Contract C3: an answer to a request the relay holds goes only to the connection that raised
    // it (the newest presenting its claim), never to whoever claims the session now.
    if (bound && bound.claim !== null) {
      const asker = this.core.claims.newest(bound.claim);
      if (!asker) return refuse('no-route', `the emitter that raised request ${String(ev['subject']).slice(0, 200)} is offline`);
      return this.forward(asker, inc, text, refuse);
    }
    const claimants = this.core.claims.live(session);
    if (claimants.length === 0) return refuse('no-route', `no connected emitter claims session ${session.slice(0, 200)} (AEP-0004 §4.2)`);
    if (claimants.length > 1) return refuse('ambiguous', `${claimants.length} live connections claim session ${session.slice(0, 200)} (AEP-0004 §4.5)`);
    this.forward(claimants[0]!, inc, text, refuse);
  }

  /** The target's declared `control.accepts` is authoritative (AEP-0004 §4.2); then forward. */
  private forward(target: CommandTarget, inc: Incoming, text: string, refuse: (code: FrameErrorCode, detail: string) => void): void {
    const type = inc.event['type'] as string;
    const control = target.hello?.capabilities['control'];
    const accepts = isObject(control) && Array.isArray(control['accepts']) ? control['accepts'] : [];
    if (!accepts.includes(type))
      return refuse('unsupported', `the target of session ${String(inc.event['session']).slice(0, 200)} does not accept ${type} (AEP-0004 §4.2)`);
    if (isRemote(target)) {
      // Behind another relay of the cluster (issue 16): delivered there; "no responders" (that
      // relay died) or a connection gone meanwhile is an exact `no-route`.
      target.forwardCommand(text).then(
        (refusal) => {
          if (refusal) return refuse(refusal.code, refusal.detail);
          this.delivered(inc);
        },
        (err: unknown) =>
          refuse(
            'no-route',
            `the relay of the target of session ${String(inc.event['session']).slice(0, 200)} did not answer: ${err instanceof Error ? err.message : String(err)}`,
          ),
      );
      return;
    }
    // Forward the received bytes (retransmits too: the target's recorded re-ack recovers a lost ack).
    target.sendText(text);
    this.delivered(inc);
  }

  private delivered(inc: Incoming): void {
    this.core.counters.commandsForwarded++;
    // Persisted in the session history and fanned out (AEP-0004 §4.4).
    this.core.log.offer(inc, null, (err) =>
      this.core.opts.log(`the history copy of command ${String(inc.event['id']).slice(0, 60)} could not be stored: ${err.message}`),
    );
  }
}
