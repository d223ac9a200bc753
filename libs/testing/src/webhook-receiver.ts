import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ServerCertificate } from './test-ca';

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When the whole body had arrived (ms since the epoch). */
  at: number;
  /** The local address it came in on (which listener: `127.0.0.1`, `::1`, …). */
  localAddress: string;
}

export interface WebhookReceiverOptions {
  path?: string;
  check?: (body: string, headers: http.IncomingHttpHeaders) => void;
  /** Serve https with this certificate (e.g. one of a `TestCertificateAuthority`). */
  tls?: ServerCertificate;
  /** The host of `url` (e.g. `localhost`); default: the first listen address. */
  host?: string;
  /** Addresses listened on, one port for all (e.g. `['127.0.0.1', '::1']`); default `127.0.0.1`. */
  listen?: readonly string[];
}

/**
 * A real HTTP webhook receiver on a free loopback port for the delivery tests: records every
 * request in arrival order and answers `status` after `delayMs` (both changeable while it runs),
 * tracking how many requests it holds at once. `check` runs on each request before it is
 * recorded (verify a signature there: a throw answers 400 and records nothing). It can serve
 * https, under a host name, on several addresses (both families) at one port.
 */
export class WebhookReceiver {
  readonly requests: ReceivedWebhook[] = [];
  status = 200;
  delayMs = 0;
  inFlight = 0;
  maxInFlight = 0;
  url = '';
  private readonly servers: http.Server[] = [];
  private readonly handler: http.RequestListener;

  constructor(private readonly opts: WebhookReceiverOptions = {}) {
    this.handler = (req, res) => {
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
        this.requests.push({ headers: req.headers, body, at: Date.now(), localAddress: req.socket.localAddress ?? '' });
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        setTimeout(() => {
          this.inFlight -= 1;
          res.writeHead(this.status, { 'content-type': 'text/plain' }).end('ignored body');
        }, this.delayMs);
      });
    };
  }

  async start(): Promise<this> {
    const [first, ...more] = this.opts.listen ?? ['127.0.0.1'];
    const listen = (address: string, port: number) => {
      const server = this.opts.tls ? https.createServer({ key: this.opts.tls.key, cert: this.opts.tls.cert }, this.handler) : http.createServer(this.handler);
      this.servers.push(server);
      return new Promise<number>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, address, () => resolve((server.address() as AddressInfo).port));
      });
    };
    const port = await listen(first, 0);
    for (const address of more) await listen(address, port);
    const host = this.opts.host ?? (first.includes(':') ? `[${first}]` : first);
    this.url = `${this.opts.tls ? 'https' : 'http'}://${host}:${port}${this.opts.path ?? '/hook'}`;
    return this;
  }

  stop(): Promise<void> {
    return Promise.all(
      this.servers.map((server) => {
        server.closeAllConnections();
        return new Promise<void>((resolve) => server.close(() => resolve()));
      }),
    ).then(() => undefined);
  }

  /** Each body parsed as JSON (webhook bodies are JSON arrays). */
  bodies<T = unknown>(): T[] {
    return this.requests.map((r) => JSON.parse(r.body) as T);
  }
}
