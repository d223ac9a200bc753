import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the whole body had arrived (ms since the epoch). */
  at: number;
}

/**
 * A real HTTP webhook receiver on a free loopback port for the delivery tests: records every
 * request in arrival order and answers `status` after `delayMs` (both changeable while it runs),
 * tracking how many requests it holds at once. `check` runs on each request before it is
 * recorded (verify a signature there: a throw answers 400 and records nothing).
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  status = 200;
  delayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  url = '';
  private readonly server: http.Server;

  constructor(private readonly opts: { path?: string; check?: (body: string, headers: http.IncomingHttpHeaders) => void } = {}) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        try {
          this.opts.check?.(body, req.headers);
        } catch (err) {
          res.writeHead(400, { 'content-type': 'text/plain' }).end(String(err));
          return;
        }
        this.requests.push({ headers: req.headers, body, at: Date.now() });
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight -= 1;
          res.writeHead(this.status, { 'content-type': 'text/plain' }).end('ignored body');
        }, this.delayMs);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${this.opts.path ?? '/hook'}`;
    return this;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Each body parsed as JSON (webhook bodies are JSON arrays). */
  bodies<T = unknown>(): T[] {
    return this.requests.map((r) => JSON.parse(r.body) as T);
  }
}
