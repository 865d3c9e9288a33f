// Shared by the bridge tests: start `aep mcp wrap -- node fixtures/server.mjs` as a real
// subprocess behind a real SDK Client (the host), and watch a relay session.
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { subscribe } from '@aep/client/node';
import type { WireEvent } from '@aep/client';
import { aepArgv, repoRoot } from '../../../test/support/cli.js';

/** The wrapped test server. */
export const SERVER = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url));

export type ElicitHandler = (req: ElicitRequest, extra: { signal: AbortSignal }) => Promise<ElicitResult>;

export interface Host {
  client: Client;
  stderr: () => string;
  close: () => Promise<void>;
  /** Call `ask` with a variant; returns the parsed tool text (or the error text). */
  ask: (
    variant: 'all' | 'unsupported' | 'url' | 'counts' | 'secret',
  ) => Promise<{ action?: string; content?: Record<string, unknown> | null; types?: Record<string, string>; error?: string }>;
}

/** Start a host (SDK Client) connected to `aep mcp wrap ARGS -- node server.mjs`. */
export async function startHost(wrapArgs: string[], opts: { elicit?: ElicitHandler; env?: Record<string, string> } = {}): Promise<Host> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: aepArgv(['mcp', 'wrap', ...wrapArgs, '--', process.execPath, SERVER]),
    env: { ...(process.env as Record<string, string>), ...(opts.env ?? {}) },
    cwd: repoRoot,
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  const client = new Client({ name: 'test-host', version: '1.0.0' }, { capabilities: opts.elicit ? { elicitation: { form: {}, url: {} } } : {} });
  if (opts.elicit) {
    const handler = opts.elicit;
    client.setRequestHandler(ElicitRequestSchema, (req, extra) => handler(req, { signal: extra.signal }));
  }
  await client.connect(transport, { timeout: 30_000 });
  return {
    client,
    stderr: () => err,
    close: async () => {
      await client.close();
    },
    ask: async (variant) => {
      const r = await client.callTool({ name: 'ask', arguments: { variant } }, undefined, { timeout: 90_000 });
      const first = (r.content as { type: string; text?: string }[])[0];
      return JSON.parse(first?.text ?? '{}') as { action?: string; content?: Record<string, unknown> | null; types?: Record<string, string>; error?: string };
    },
  };
}

/** Collects the events of one relay session and lets a test wait for one. */
export class SessionWatch {
  readonly events: WireEvent[] = [];
  private waiters: { pred: (e: WireEvent) => boolean; resolve: (e: WireEvent) => void }[] = [];
  private readonly sub;

  constructor(url: string, token: string, session: string) {
    this.sub = subscribe({ url, token, filter: { session }, from: 'all' }, (e) => {
      this.events.push(e);
      for (const w of [...this.waiters]) {
        if (w.pred(e)) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    });
  }

  ready(): Promise<void> {
    return this.sub.ready;
  }

  /** Resolves with the first (past or future) event matching `pred`; rejects after `ms`. */
  wait(pred: (e: WireEvent) => boolean, what: string, ms = 30_000): Promise<WireEvent> {
    const found = this.events.find(pred);
    if (found) return Promise.resolve(found);
    return new Promise<WireEvent>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}; saw ${this.events.map((e) => e.type).join(', ')}`)), ms);
      this.waiters.push({
        pred,
        resolve: (e) => {
          clearTimeout(t);
          resolve(e);
        },
      });
    });
  }

  close(): void {
    this.sub.close();
  }
}

/** Types of the events about one attention request (its lifecycle), in order. */
export function lifecycle(events: WireEvent[], requestId: string): string[] {
  return events.filter((e) => e.type.startsWith('attention.') && (e.id === requestId || e.subject === requestId)).map((e) => e.type);
}
