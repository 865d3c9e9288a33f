// Steering through `aep mcp wrap` (issue 14 item 4, contract C8, README "Steering"), end to end:
// a real relay, the real SDK server (fixture) and host, `CommandSender` as the person's surface.
// control.cancel: acked, then the open elicitation is answered `cancel`, the host's tool calls in
// flight are cancelled at the server (`notifications/cancelled`) and answered to the host with
// the person's reason; the outcome events are cause-linked to the command; the server keeps
// serving. control.pause / control.resume: not declared, nacked `unsupported`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { LoggingMessageNotificationSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { CommandSender } from '@aep/client/node';
import type { WireEvent } from '@aep/client';
import { createEmitter, validateEvent, validateStream } from '@aep/protocol';
import { REQUEST_CANCELLED_CODE } from '@aep/mcp-bridge';
import { startRelayProcess } from '../../../test/support/cli.js';
import { startHost, SessionWatch } from './support.js';

const TOKEN = `t-${randomBytes(8).toString('hex')}`;
let relay: Awaited<ReturnType<typeof startRelayProcess>>;
let sender: CommandSender;
before(async () => {
  relay = await startRelayProcess(['--memory', '--token', TOKEN]);
  sender = await CommandSender.connect({ url: relay.url, token: TOKEN, agent: 'steer-test' });
});
after(async () => {
  await sender.close();
  await relay.stop();
});

const wrapArgs = (session: string) => ['--relay', relay.url, '--token', TOKEN, '--session', session, '--agent', 'steer-bridge'];

test('control.cancel: ack, then the open elicitation is answered cancel and tool calls in flight are cancelled, all cause-linked', async () => {
  const session = `s-cancel-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session));
  const logs: string[] = [];
  const logged = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no log "${text}"; got ${JSON.stringify(logs)}`)), 20_000);
      const check = () => {
        if (logs.some((l) => l.startsWith(text))) {
          clearTimeout(t);
          resolve();
        } else setTimeout(check, 20);
      };
      check();
    });
  host.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(String(n.params.data));
  });
  try {
    const asking = host.client.callTool({ name: 'ask', arguments: { variant: 'all' } }, undefined, { timeout: 60_000 }).then(
      () => 'result',
      (e: unknown) => e,
    );
    const slow = host.client.callTool({ name: 'slow', arguments: {} }, undefined, { timeout: 60_000 }).then(
      () => 'result',
      (e: unknown) => e,
    );
    const req = await watch.wait((e) => e.type === 'attention.requested', 'attention.requested');
    await logged('slow: started');

    const result = await sender.cancel({ session, scope: 'session', reason: 'wrong repository, stop' });
    assert.equal(result.status, 'accepted', JSON.stringify(result));
    const cmdId = result.command.id;

    // The host: both tool calls fail with the person's reason (the host never cancelled them).
    for (const outcome of [await asking, await slow]) {
      assert.ok(outcome instanceof McpError, String(outcome));
      assert.equal(outcome.code, REQUEST_CANCELLED_CODE);
      assert.match(outcome.message, /cancelled by a person through AEP: wrong repository, stop/);
    }
    // The server: its elicitation got `cancel`, its slow tool was aborted by notifications/cancelled.
    await logged('ask: cancel');
    await logged('slow: cancelled: cancelled by a person through AEP: wrong repository, stop');

    // The relay: ack first, then the outcomes, each cause-linked to the command.
    const ack = await watch.wait((e) => e.type === 'control.accepted' && e.cause === cmdId, 'the ack');
    const dismissed = await watch.wait((e) => e.type === 'attention.resolved' && e.subject === req.id, 'the dismissal');
    const status = await watch.wait((e) => e.type === 'progress.status' && e.cause === cmdId, 'progress.status');
    assert.equal((dismissed.data as { resolution: string }).resolution, 'dismissed');
    assert.equal(dismissed.cause, cmdId, 'the dismissal is cause-linked to the command');
    assert.equal((status.data as { phase: string }).phase, 'cancelled');
    assert.match((status.data as { message: string }).message, /1 open question\(s\) answered "cancel", 2 MCP request\(s\)/);
    assert.ok((ack.seq ?? 0) < (dismissed.seq ?? 0) && (dismissed.seq ?? 0) < (status.seq ?? 0), 'ack, then outcomes (AEP-0004 §1)');
    assert.doesNotMatch(JSON.stringify(status), /wrong repository/, 'the reason goes to MCP, not into our outcome text');

    // The server keeps serving, and a new question is asked through AEP as before.
    const echo = await host.client.callTool({ name: 'echo', arguments: { text: 'still here' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'echo: still here' }]);
    for (const e of watch.events.filter((x) => x.agent === 'steer-bridge')) assert.deepEqual(validateEvent(e), [], `${e.type}: ${JSON.stringify(e)}`);
    assert.deepEqual(validateStream(watch.events), []);
  } finally {
    watch.close();
    await host.close();
  }
});

test('control.cancel with nothing in flight is accepted (a no-op, still reported); run scope and a bad scope are invalid', async () => {
  const session = `s-cancel0-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session));
  try {
    await watch.wait((e) => e.type === 'session.started', 'session.started');
    const idle = await sender.cancel({ session, scope: 'session' });
    assert.equal(idle.status, 'accepted', JSON.stringify(idle));
    const status = await watch.wait((e) => e.type === 'progress.status' && e.cause === idle.command.id, 'progress.status');
    assert.match((status.data as { message: string }).message, /0 open question\(s\)/);

    const run = await sender.cancel({ session, scope: 'run', run: 'r-1' });
    assert.equal(run.status, 'rejected');
    assert.equal(run.reason, 'invalid');
    assert.deepEqual(
      run.issues?.map((i) => [i.rule, i.path]),
      [['control.cancel.unknown-run', '/run']],
    );

    const builder = createEmitter({ source: 'aep://test/agent/steer-test', agent: 'steer-test' });
    // What the live checker's control-ack probe sends for a non-respond type: `data:{}`, no scope.
    const noScope = { ...(builder.build({ type: 'control.cancel', session, data: { scope: 'session' } }) as unknown as WireEvent), data: {} };
    const bad = await sender.send(noScope);
    if (bad.status === 'rejected') {
      assert.equal(bad.reason, 'invalid');
      assert.deepEqual(
        bad.issues?.map((i) => i.rule),
        ['control.cancel.scope'],
      );
    } else {
      // A relay that validates payloads refuses it before the bridge sees it.
      assert.equal(bad.status, 'refused', JSON.stringify(bad));
    }
    assert.ok(!watch.events.some((e) => e.type === 'progress.status' && e.cause === noScope.id), 'nothing was cancelled');
  } finally {
    watch.close();
    await host.close();
  }
});

test('control.pause and control.resume are not something MCP can honour: nacked unsupported', async () => {
  const session = `s-pause-${randomBytes(3).toString('hex')}`;
  const watch = new SessionWatch(relay.url, TOKEN, session);
  await watch.ready();
  const host = await startHost(wrapArgs(session));
  try {
    await watch.wait((e) => e.type === 'session.started', 'session.started');
    const builder = createEmitter({ source: 'aep://test/agent/steer-test', agent: 'steer-test' });
    for (const type of ['control.pause', 'control.resume']) {
      const r = await sender.send(builder.build({ type, session, data: {} }) as unknown as WireEvent);
      // The relay knows the target's declaration and refuses on its behalf (AEP-0004 §4.2), or
      // the target nacks: either way `unsupported`.
      assert.ok(r.status === 'refused' || r.status === 'rejected', `${type}: ${JSON.stringify(r)}`);
      assert.equal(r.reason, 'unsupported', type);
    }
    // The server was not touched: it still serves.
    const echo = await host.client.callTool({ name: 'echo', arguments: { text: 'x' } });
    assert.deepEqual(echo.content, [{ type: 'text', text: 'echo: x' }]);
  } finally {
    watch.close();
    await host.close();
  }
});
