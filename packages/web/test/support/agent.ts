// A real test agent for the inbox e2e tests: an `@aep/client` EmitterConnection (the same one the
// demo agent, the adapter and the bridge use) that raises events with any attributes, records
// every command the relay forwards to it, and decides each with a handler the test sets.
import { EmitterConnection } from '@aep/client/node';
import type { CommandDecision, IncomingCommand } from '@aep/client';

/** The handler deciding one command; the default accepts. */
export type Decide = (cmd: IncomingCommand) => CommandDecision;

export interface TestAgent {
  conn: EmitterConnection;
  /** Every command received, in arrival order (redeliveries included). */
  commands: IncomingCommand[];
  /** Wait (bounded) for a received command matching `pred`. */
  command(pred: (c: IncomingCommand) => boolean, what: string, timeoutMs?: number): Promise<IncomingCommand>;
  /** Replace the decision of one command type. */
  decide(type: string, fn: Decide): void;
  close(): Promise<void>;
}

/** Connect a test agent declaring `accepts` (AEP-0004 §4.2: only what it honours). */
export async function startAgent(url: string, token: string, agent: string, accepts: string[]): Promise<TestAgent> {
  const conn = await EmitterConnection.connect({ url, token, agent, capture: 'full', control: { accepts } });
  const commands: IncomingCommand[] = [];
  const deciders = new Map<string, Decide>();
  const waiters: { pred: (c: IncomingCommand) => boolean; resolve: (c: IncomingCommand) => void }[] = [];
  for (const type of accepts) {
    conn.onCommand(type, (cmd) => {
      commands.push(cmd);
      for (const w of [...waiters])
        if (w.pred(cmd)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(cmd);
        }
      return (deciders.get(type) ?? (() => ({ status: 'accepted' })))(cmd);
    });
  }
  return {
    conn,
    commands,
    command(pred, what, timeoutMs = 30_000) {
      const have = commands.find(pred);
      if (have) return Promise.resolve(have);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(commands.map((c) => c.event))}`)), timeoutMs);
        waiters.push({
          pred,
          resolve: (c) => {
            clearTimeout(t);
            resolve(c);
          },
        });
      });
    },
    decide(type, fn) {
      deciders.set(type, fn);
    },
    close: () => conn.close(500),
  };
}
