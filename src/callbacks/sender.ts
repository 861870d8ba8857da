// Sends a job's callback when it becomes final: POST {id, status} to the job's callback_url, signed with the
// client's callback secret (sign.ts), through the SSRF guard (ssrf.ts), with a timeout, retried with backoff.
// Never in the job's way: the worker hands over the job id and goes on; a delivery that keeps failing is logged
// and dropped. Retries live in this process's memory, so a restart drops the ones still waiting (docs/extras.md).
import { randomBytes } from "node:crypto";
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { Logger } from "pino";
import { getClient } from "../storage/clients.js";
import type { Store } from "../storage/db.js";
import { getJob } from "../storage/jobs.js";
import { readJobConfig } from "../storage/stored.js";
import { callbackSecret, SIGNATURE_HEADER, signatureHeader } from "./sign.js";
import { isPrivateAddress } from "./ssrf.js";

export interface CallbackOptions {
  store: Store;
  key: Buffer;
  log: Logger;
  allowPrivate: boolean;
  /** Waits before the 2nd, 3rd... attempt; one attempt more than there are delays. */
  retryDelaysMs?: number[];
  timeoutMs?: number;
}

export const DEFAULT_RETRY_DELAYS_MS = [1000, 5000, 30_000, 120_000, 600_000];
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 64 * 1024;

class Refused extends Error {}

type Outcome = { ok: true; status: number } | { ok: false; retry: boolean; reason: string };

export class CallbackSender {
  private timers = new Set<NodeJS.Timeout>();
  private inFlight = new Set<Promise<void>>();
  private requests = new Set<http.ClientRequest>();
  private stopped = false;

  constructor(private readonly opts: CallbackOptions) {}

  /** The job just became final: send its callback, if it has one, in the background. */
  notify(jobId: string): void {
    if (this.stopped) return;
    const p = this.start(jobId).catch((err) =>
      this.opts.log.warn({ job_id: jobId, err: (err as Error).message }, "callback not sent"),
    );
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  /** Drops the retries still waiting and cuts the attempts under way (shutdown must not wait for a receiver). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    for (const r of this.requests) r.destroy(new Error("sori is shutting down"));
    await Promise.allSettled([...this.inFlight]);
  }

  private async start(jobId: string): Promise<void> {
    const job = await getJob(this.opts.store, jobId);
    if (!job || job.deleted_at !== null) return;
    const url = readJobConfig(job.config).callback_url;
    if (!url || (job.state !== "completed" && job.state !== "failed")) return;
    const client = await getClient(this.opts.store, job.client_id);
    if (!client) return;
    const body = JSON.stringify({ id: job.id, status: job.state });
    const secret = callbackSecret(this.opts.key, client);
    const delivery = randomBytes(12).toString("base64url");
    await this.attempt({ jobId, clientId: job.client_id, url, body, secret, delivery }, 1);
  }

  private async attempt(
    d: { jobId: string; clientId: string; url: string; body: string; secret: string; delivery: string },
    n: number,
  ): Promise<void> {
    const delays = this.opts.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    const log = this.opts.log.child({ job_id: d.jobId, client_id: d.clientId, delivery: d.delivery, attempt: n });
    const out = await this.post(d.url, d.body, {
      "content-type": "application/json",
      "user-agent": "sori-callback/1",
      [SIGNATURE_HEADER]: signatureHeader(d.secret, d.body),
      "x-sori-delivery": d.delivery,
      "x-sori-attempt": String(n),
    });
    if (out.ok) {
      log.info({ status: out.status }, "callback delivered");
      return;
    }
    const delay = delays[n - 1];
    if (!out.retry || delay === undefined || this.stopped) {
      log.warn({ reason: out.reason }, "callback given up");
      return;
    }
    log.info({ reason: out.reason, retry_in_ms: delay }, "callback failed; will retry");
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, delay);
      t.unref();
      this.timers.add(t);
    });
    if (!this.stopped) await this.attempt(d, n + 1);
  }

  /** One POST. Redirects are not followed (a redirect could lead anywhere the guard would refuse). */
  private post(target: string, body: string, headers: Record<string, string>): Promise<Outcome> {
    const url = new URL(target);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (!this.opts.allowPrivate && (host.toLowerCase() === "localhost" || (isIP(host) && isPrivateAddress(host)))) {
      return Promise.resolve({ ok: false, retry: false, reason: `refused: ${host} is not a public address` });
    }
    const lookup: LookupFunction = (hostname, options, cb) => {
      dns.lookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
        if (err) return cb(err, "", 4);
        const bad = this.opts.allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
        if (bad) return cb(new Refused(`refused: ${hostname} resolves to ${bad.address}, not a public address`), "", 4);
        if (options.all) return (cb as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
        const first = addresses[0];
        if (!first) return cb(new Error(`${hostname} has no address`), "", 4);
        cb(null, first.address, first.family);
      });
    };
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const request = url.protocol === "https:" ? https.request : http.request;
    return new Promise((resolve) => {
      const req = request(
        url,
        {
          method: "POST",
          headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
          lookup,
          timeout: timeoutMs,
        },
        (res) => {
          let read = 0;
          res.on("data", (c: Buffer) => {
            read += c.length;
            if (read > MAX_RESPONSE_BYTES) res.destroy();
          });
          res.on("close", () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve({ ok: true, status });
            // The receiver refused it for good (4xx), unless it asks to be tried again (408, 429).
            else
              resolve({
                ok: false,
                retry: status >= 500 || status === 408 || status === 429 || status < 200,
                reason: `HTTP ${status}`,
              });
          });
        },
      );
      this.requests.add(req);
      req.on("close", () => this.requests.delete(req));
      req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on("error", (err) => resolve({ ok: false, retry: !(err instanceof Refused), reason: err.message }));
      req.end(body);
    });
  }
}
