import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A response body as JSON, typed loosely for assertions (Node's fetch types it `unknown`). */
export async function readJson(res: Response): Promise<any> {
  return res.json();
}

/** A body text as JSON, or undefined when it is not JSON (an error page, an empty body). */
export function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A loopback HTTP server standing in for an upstream, answering as the test writes it: one handler per path. */
export interface HttpStub {
  url: string;
  /** Requests as received: method, path with query, headers, body text. */
  received: { method: string; url: string; headers: IncomingMessage['headers']; body: string }[];
  close(): Promise<void>;
}

export async function startHttpStub(routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>): Promise<HttpStub> {
  const received: HttpStub['received'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      const route = routes[new URL(req.url ?? '/', 'http://stub').pathname];
      if (route) route(req, res, body);
      else res.writeHead(500).end('no such stub route');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        // Answers a test left stalled hold their connections open.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers `body` as JSON with `status`. */
export function answerJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
