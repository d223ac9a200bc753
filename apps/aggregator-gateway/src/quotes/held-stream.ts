import { systemClock, type Clock, type Timer } from '@chainpipe/runtime';

/** The response an SSE stream is written to. */
export interface StreamSink {
  /**
   * Sets the response head (status and SSE headers); `flush`: send it now, as no event follows
   * at once (otherwise the first event's write carries it, one packet instead of two).
   */
  open(flush: boolean): void;
  write(chunk: string): void;
  /** False once the response ended or the client left: nothing more is sent. */
  writable(): boolean;
}

/**
 * When the quote stream begins: at its first event, or once `heartbeatMs` passed without one.
 * Until then events are held and nothing is sent, so the answer can still be an error envelope
 * (every channel failed first). Once begun, the held events go out in order and a heartbeat
 * comment every `heartbeatMs` keeps proxies from closing a quiet stream.
 */
export class HeldStream {
  private begun = false;
  private readonly held: string[] = [];
  private readonly grace: Timer;
  private heartbeat?: Timer;

  constructor(
    private readonly sink: StreamSink,
    private readonly heartbeatMs: number,
    private readonly clock: Pick<Clock, 'setTimeout' | 'setInterval'> = systemClock,
  ) {
    this.grace = clock.setTimeout(() => this.begin(), heartbeatMs);
  }

  get started(): boolean {
    return this.begun;
  }

  /** Begins the stream now (idempotent; nothing happens once the response is not writable). */
  begin(): void {
    if (this.begun || !this.sink.writable()) return;
    this.begun = true;
    this.grace.cancel();
    this.sink.open(this.held.length === 0);
    for (const e of this.held.splice(0)) this.sink.write(e);
    this.heartbeat = this.clock.setInterval(() => {
      if (this.sink.writable()) this.sink.write(': heartbeat\n\n');
    }, this.heartbeatMs);
  }

  /** Sends an event, or holds it until the stream begins. */
  write(event: string): void {
    if (!this.sink.writable()) return;
    if (this.begun) this.sink.write(event);
    else this.held.push(event);
  }

  /** Stops its timers: the stream ended, or the answer became an error envelope. */
  close(): void {
    this.grace.cancel();
    this.heartbeat?.cancel();
  }
}
