import { fork, type ChildProcess } from 'node:child_process';
import WebSocket from 'ws';

/**
 * WebSocket clients in child processes, so that 10,000 connections do not share the server's
 * process (and its file descriptor limit) with their clients. The parent asks each child to open
 * its share, then to report once it has received a number of messages since the last reset.
 */

type Command =
  | { cmd: 'connect'; url: string; headers: Record<string, string>; count: number; subscribe?: unknown }
  | { cmd: 'expect'; total: number }
  | { cmd: 'close' };

/** Runs in the child: serves the parent's commands. */
function serve(): void {
  const sockets: WebSocket[] = [];
  let received = 0;
  let waiting: { total: number } | undefined;
  const check = () => {
    if (waiting && received >= waiting.total) {
      waiting = undefined;
      process.send!({ done: true });
    }
  };
  process.on('message', async (m: Command) => {
    if (m.cmd === 'connect') {
      for (let i = 0; i < m.count; i += 50) {
        await Promise.all(
          Array.from({ length: Math.min(50, m.count - i) }, async () => {
            let ws: WebSocket;
            // A connection refused under the accept backlog is retried.
            for (;;) {
              ws = new WebSocket(m.url, { headers: m.headers, perMessageDeflate: false });
              ws.on('error', () => undefined);
              const ok = await new Promise<boolean>((r) => {
                ws.once('open', () => r(true));
                ws.once('close', () => r(false));
              });
              if (ok) break;
            }
            if (m.subscribe) {
              const reply = new Promise((r) => ws.once('message', r));
              ws.send(JSON.stringify(m.subscribe));
              await reply;
            }
            sockets.push(ws);
          }),
        );
      }
      // Pushes counted from here (a snapshot after `subscribed` may still be in flight: settle first).
      await new Promise((r) => setTimeout(r, 300));
      for (const ws of sockets) ws.on('message', () => {
        received++;
        if (waiting) check();
      });
      process.send!({ connected: sockets.length });
    } else if (m.cmd === 'expect') {
      received = 0;
      waiting = { total: m.total };
      process.send!({ ready: true });
    } else if (m.cmd === 'close') {
      for (const ws of sockets) ws.terminate();
      process.exit(0);
    }
  });
}

const reply = <T>(child: ChildProcess, key: string): Promise<T> =>
  new Promise((resolve, reject) => {
    const onMessage = (m: Record<string, unknown>) => {
      if (key in m) {
        child.off('message', onMessage);
        resolve(m as T);
      }
    };
    child.on('message', onMessage);
    child.once('exit', (code) => reject(new Error(`ws fleet child exited (${code})`)));
  });

export class WsFleet {
  private constructor(private readonly children: { child: ChildProcess; count: number }[]) {}

  /** `count` connections to `url`, spread over children of at most `perChild` each. */
  static async connect(opts: { url: string; headers?: Record<string, string>; count: number; perChild?: number; subscribe?: unknown }): Promise<WsFleet> {
    const perChild = opts.perChild ?? 2500;
    const shares: number[] = [];
    for (let left = opts.count; left > 0; left -= perChild) shares.push(Math.min(perChild, left));
    const children = shares.map((count) => ({ child: fork(__filename, [], { execArgv: ['--require', 'tsx/cjs'], env: { ...process.env, WS_FLEET_CHILD: '1' } }), count }));
    await Promise.all(
      children.map(async ({ child, count }) => {
        const done = reply<{ connected: number }>(child, 'connected');
        child.send({ cmd: 'connect', url: opts.url, headers: opts.headers ?? {}, count, subscribe: opts.subscribe } satisfies Command);
        await done;
      }),
    );
    return new WsFleet(children);
  }

  /**
   * Runs `send` and resolves once every connection received `perConnection` messages; the time
   * includes the children's report over IPC (well under a millisecond each).
   */
  async timeDelivery(perConnection: number, send: () => void): Promise<number> {
    await Promise.all(
      this.children.map(async ({ child, count }) => {
        const ready = reply(child, 'ready');
        child.send({ cmd: 'expect', total: count * perConnection } satisfies Command);
        await ready;
      }),
    );
    const finished = Promise.all(this.children.map(({ child }) => reply(child, 'done')));
    const t0 = process.hrtime.bigint();
    send();
    await finished;
    return Number(process.hrtime.bigint() - t0) / 1e6;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.children.map(({ child }) => {
        const exited = new Promise((r) => child.once('exit', r));
        child.send({ cmd: 'close' } satisfies Command);
        return exited;
      }),
    );
  }
}

if (process.env.WS_FLEET_CHILD && process.send && require.main === module) serve();
