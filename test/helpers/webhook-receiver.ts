import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivery {
  id: string;
  type: string;
  appId: string;
  timestamp: string;
  data: any;
  /** When it arrived (ms). */
  at: number;
}

/**
 * A webhook receiver on loopback, as an integrator would write it: every request is verified with
 * the `standardwebhooks` library (a request that does not verify is counted in `forged` and
 * answered 400), and events are kept once per `webhook-id` (`attempts` counts every request).
 * `answer` decides the status of each verified request; `down()` closes the port, `up()` opens it
 * again on the same one.
 */
export class WebhookReceiver {
  readonly events = new Map<string, Delivery>();
  readonly attempts: Delivery[] = [];
  forged = 0;
  secret = '';
  answer: (d: Delivery, req: IncomingMessage) => number | Promise<number> = () => 200;
  private server: Server | undefined;
  private port = 0;
  private readonly waiters = new Set<() => void>();

  static async start(): Promise<WebhookReceiver> {
    const r = new WebhookReceiver();
    await r.up();
    return r;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hooks`;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let d: Delivery;
      try {
        const verified = new Webhook(this.secret).verify(body, req.headers as Record<string, string>) as Omit<Delivery, 'at'>;
        if (verified.id !== req.headers['webhook-id']) throw new Error('id differs from webhook-id');
        d = { ...verified, at: Date.now() };
      } catch {
        this.forged++;
        res.writeHead(400).end();
        return;
      }
      this.attempts.push(d);
      void Promise.resolve(this.answer(d, req)).then((status) => {
        if (status >= 200 && status < 300 && !this.events.has(d.id)) this.events.set(d.id, d);
        res.writeHead(status).end();
        for (const wake of this.waiters) wake();
      });
    });
  }

  async up(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  /** Delivered events (2xx answered) of a type, in arrival order. */
  ofType(type: string): Delivery[] {
    return [...this.events.values()].filter((d) => d.type === type);
  }

  /** Resolves once `check` holds (checked after every request), or rejects after `timeoutMs`. */
  async until(check: () => boolean, timeoutMs: number, what = 'the webhook events'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!check()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${this.events.size} events, ${this.attempts.length} attempts`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
  }

  async stop(): Promise<void> {
    await this.down();
  }
}
