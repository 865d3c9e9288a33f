// Policy delegates in the inbox (issue 18): "Always allow this" on a permission request whose
// complete text the person holds, and the policy view (#/policy): every live delegate, paused or
// not, its active grants, each revocable. What a grant allows is shown by its structure (agent,
// tool, approval digest, expiry); the text itself never travels below capture full.
import { useEffect, useState } from 'preact/hooks';
import { visibleText } from '@aep/protocol';
import type { ApprovalCard } from '../approve.js';
import { COLLAPSE_LINES, withProof } from '../approve.js';
import type { SendOutcome } from '../control.js';
import { buildRespond } from '../form.js';
import { buildGrant, buildRevoke, delegateSessions, foldPolicy, GRANT_TTLS } from '../policy.js';
import type { RequestEntry } from '../store.js';
import { formatTime } from './common.js';
import type { AnswerContext } from './request.js';
import { uiFor, updateUi } from './state.js';

function outcomeText(o: SendOutcome, who: string): string {
  switch (o.status) {
    case 'accepted':
      return '';
    case 'rejected':
      return `${who} refused (${o.reason})${o.detail ? `: ${visibleText(o.detail)}` : ''}`;
    case 'refused':
      return `the relay refused it (${o.code})${o.detail ? `: ${visibleText(o.detail)}` : ''}`;
    case 'timeout':
      return `${who} did not acknowledge in time`;
    case 'error':
      return `could not send: ${o.detail}`;
  }
}

/**
 * "Always allow this": the person's own allow (with the approval proof, like the Allow button),
 * then a grant to the live delegate for this agent, tool and exact input, for the chosen time.
 * Offered only where Allow is (the complete text is held and every line was shown) and a
 * delegate that takes grants is connected.
 */
export function AlwaysAllow(props: { entry: RequestEntry; ctx: AnswerContext; card: ApprovalCard; blocked: boolean }) {
  const { entry, ctx, card, blocked } = props;
  const [ttl, setTtl] = useState<string>('24h');
  const [state, setState] = useState<{ status: 'sending' | 'done' | 'failed'; text: string } | null>(null);
  useEffect(() => {
    void ctx.roster();
  }, [entry.key]);
  const delegates = ctx.snapshot ? delegateSessions(ctx.snapshot.entries) : [];
  const allow = card.options.find((o) => o.effect === 'allow' && o.offer && !o.contradicts);
  const ui = uiFor(entry.key);
  const mustExpand = card.lines > COLLAPSE_LINES && !ui.expanded;
  const e = entry.event;
  // Once started it stays up to report the grant (the request resolves in between).
  if (
    state === null &&
    (entry.status !== 'pending' || !ctx.canAnswer || !card.view.complete || !allow || delegates.length !== 1 || typeof e.subject !== 'string')
  )
    return null;
  const delegate = delegates[0] ?? '';
  if (!allow || typeof e.subject !== 'string') return null;
  const go = async () => {
    setState({ status: 'sending', text: 'Allowing and granting…' });
    const answer = withProof(buildRespond(e, { option: allow.id }, 'metadata', ctx.host), e, card, allow.effect);
    updateUi(entry.key, { phase: { kind: 'sending', commandId: answer.id }, commands: [...ui.commands, answer.id] });
    const a = await ctx.send(answer);
    updateUi(entry.key, {
      phase: a.status === 'accepted' ? { kind: 'accepted', commandId: answer.id } : { kind: 'error', detail: outcomeText(a, 'the agent') },
    });
    if (a.status !== 'accepted') {
      setState({ status: 'failed', text: `Not allowed: ${outcomeText(a, 'the agent')}. No grant was made.` });
      return;
    }
    const grant = buildGrant(e, card, delegate, ctx.host, ttl);
    if (!grant) {
      setState({ status: 'failed', text: 'Allowed once; this request cannot be granted.' });
      return;
    }
    const g = await ctx.send(grant);
    setState(
      g.status === 'accepted'
        ? {
            status: 'done',
            text: `Allowed, and granted for ${GRANT_TTLS.find(([v]) => v === ttl)?.[1] ?? ttl}: the delegate allows exactly this input from this agent until the grant expires. Revoke it in Policy.`,
          }
        : { status: 'failed', text: `Allowed once, but no grant was made: ${outcomeText(g, 'the delegate')}.` },
    );
  };
  const uid = `always-${entry.order}`;
  return (
    <div class="always" data-testid="always-allow" data-delegate={delegate}>
      <label for={`${uid}-ttl`}>Always allow this exact input for</label>{' '}
      <select id={`${uid}-ttl`} value={ttl} disabled={blocked || state?.status === 'sending'} onChange={(ev) => setTtl(ev.currentTarget.value)}>
        {GRANT_TTLS.map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>{' '}
      <button
        type="button"
        class="choice-btn effect-allow"
        data-testid="always-allow-button"
        disabled={blocked || mustExpand || state?.status === 'sending' || state?.status === 'done'}
        onClick={() => {
          void go();
        }}
      >
        Allow, and always allow this <span class="effect">effect: allow + grant</span>
      </button>
      <p class="hint">
        Scoped to agent <code>{visibleText(e.agent ?? '')}</code>, tool <code>{visibleText(e.subject)}</code> and exactly the text above; any other input still
        asks you.
      </p>
      {state ? (
        <p role="status" aria-live="polite" data-testid="always-allow-status" data-status={state.status}>
          {state.text}
        </p>
      ) : null}
    </div>
  );
}

/** #/policy: live delegates, paused or answering, and their active grants with Revoke. */
export function PolicyView(props: { ctx: AnswerContext }) {
  const { ctx } = props;
  const [busy, setBusy] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    void ctx.roster();
    const t = setInterval(() => setNow(Date.now()), 15_000);
    return () => clearInterval(t);
  }, []);
  const live = ctx.snapshot ? delegateSessions(ctx.snapshot.entries) : [];
  // Also sessions the delegate announced itself in, when it is not connected right now.
  const known = [...ctx.store.sessions.values()].filter((s) => s.events.some((e) => e.type.startsWith('x.aep.policy.'))).map((s) => s.session);
  const sessions = [...new Set([...live, ...known])];
  const revoke = async (session: string, grant: string) => {
    setBusy(grant);
    const o = await ctx.send(buildRevoke(session, grant, ctx.host));
    setBusy(null);
    setNote(o.status === 'accepted' ? `Revoked ${grant}.` : `Not revoked: ${outcomeText(o, 'the delegate')}.`);
    void ctx.roster();
  };
  return (
    <section aria-labelledby="policy-h" class="policy" data-testid="policy-view">
      <h2 id="policy-h">Policy delegates</h2>
      <p class="hint">
        A delegate answers routine requests by rule (structural facts only) and leaves the rest to you. Grants are standing allows for one agent, tool and exact
        input; they expire.
      </p>
      {sessions.length === 0 ? (
        <p class="empty" data-testid="policy-empty">
          No delegate is connected. Start one with <code>aep delegate --policy FILE</code>.
        </p>
      ) : null}
      {sessions.map((s) => {
        const { grants, paused } = foldPolicy(ctx.store.sessions.get(s)?.events ?? [], now);
        const connected = live.includes(s);
        return (
          <article key={s} class="delegate" data-delegate={s} data-paused={paused ? 'true' : 'false'}>
            <h3>
              <code>{visibleText(s)}</code>{' '}
              {connected ? (
                paused ? (
                  <span class="badge" data-testid="delegate-paused">
                    paused: answers nothing
                  </span>
                ) : (
                  <span class="badge">answering</span>
                )
              ) : (
                <span class="badge">not connected</span>
              )}
            </h3>
            {grants.length === 0 ? (
              <p class="hint">No active grants.</p>
            ) : (
              <table class="grants">
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Tool</th>
                    <th scope="col">Exact input (digest)</th>
                    <th scope="col">Until</th>
                    <th scope="col">
                      <span class="sr-only">Revoke</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {grants.map((g) => (
                    <tr key={g.grant} data-grant={g.grant}>
                      <td class="mono">{visibleText(g.agent)}</td>
                      <td class="mono">
                        {visibleText(g.tool)}
                        {g.session ? (
                          <>
                            {' '}
                            in <span class="mono">{visibleText(g.session)}</span>
                          </>
                        ) : null}
                      </td>
                      <td class="mono">{g.digest}</td>
                      <td>
                        <time dateTime={g.expires}>{formatTime(g.expires)}</time>
                      </td>
                      <td>
                        <button
                          type="button"
                          data-testid="revoke"
                          disabled={!ctx.canAnswer || !connected || busy === g.grant}
                          onClick={() => {
                            void revoke(s, g.grant);
                          }}
                        >
                          Revoke
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </article>
        );
      })}
      {note ? (
        <p role="status" aria-live="polite" data-testid="policy-note">
          {note}
        </p>
      ) : null}
    </section>
  );
}
