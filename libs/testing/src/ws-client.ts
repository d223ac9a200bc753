import WebSocket from 'ws';

export interface TestWsClient {
  ws: WebSocket;
  /** Every text message received so far, parsed. */
  received: any[];
  send(body: unknown): void;
  sendRaw(data: string | Buffer, binary?: boolean): void;
  /** The next message (after those already taken) matching `match`, or a timeout error. */
  next(match?: (m: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Messages matching `match` received within `ms` (for "receives none" checks). */
  collect(match: (m: any) => boolean, ms: number): Promise<any[]>;
  close(): Promise<void>;
  /** What `check` found wrong with received messages (a test asserts this is empty). */
  problems: string[];
}

export interface WsClientOptions {
  /**
   * Checks every received text message (against its schema, say): a text describing what is
   * wrong, or undefined. Problems are collected, not thrown, so one bad message does not hide
   * the rest of the test.
   */
  check?: (message: any) => string | undefined;
  /** Subprotocols to offer (`Sec-WebSocket-Protocol`), as a browser's `new WebSocket(url, protocols)`. */
  protocols?: string[];
}

/** A real `ws` client for tests, with a queue of parsed text messages. */
export async function connectWs(url: string, headers: Record<string, string> = {}, opts: WsClientOptions = {}): Promise<TestWsClient> {
  // A handshake the server never finishes fails the test in 15 s instead of hanging it.
  const ws = new WebSocket(url, opts.protocols ?? [], { headers, handshakeTimeout: 15_000 });
  const received: any[] = [];
  const problems: string[] = [];
  let taken = 0;
  const waiters = new Set<() => void>();
  ws.on('message', (data, isBinary) => {
    const message = isBinary ? { binary: data } : JSON.parse(data.toString());
    if (!isBinary && opts.check) {
      const problem = opts.check(message);
      if (problem) problems.push(`${problem}: ${JSON.stringify(message).slice(0, 300)}`);
    }
    received.push(message);
    for (const w of [...waiters]) w();
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`handshake answered ${res.statusCode}`)));
  });
  const client: TestWsClient = {
    ws,
    received,
    problems,
    send: (body) => ws.send(JSON.stringify(body)),
    sendRaw: (data, binary = false) => ws.send(data, { binary }),
    next: (match = () => true, timeoutMs = 15_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          for (let i = taken; i < received.length; i++) {
            if (match(received[i])) {
              taken = i + 1;
              waiters.delete(check);
              clearTimeout(timer);
              resolve(received[i]);
              return;
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching WebSocket message in ${timeoutMs} ms; last: ${JSON.stringify(received.slice(-3))}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      }),
    collect: async (match, ms) => {
      const start = received.length;
      await new Promise((r) => setTimeout(r, ms));
      return received.slice(start).filter(match);
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (ws.readyState === WebSocket.CLOSED) return resolve();
        ws.once('close', () => resolve());
        ws.close();
      }),
  };
  return client;
}

/** The HTTP answer to an upgrade request that the server refused (status, `Retry-After` and body). */
export function refusedUpgrade(url: string, headers: Record<string, string> = {}): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body }));
    });
    ws.once('error', () => undefined);
  });
}
