// SoriClient: authenticate (and refresh before expire_at), submit, read, wait (5 s polling, backing off on 429),
// export, list, delete. Errors carry the server's code (H0001...).
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import type { ExportFormat, JobList, Token, TranscribeConfig, TranscribeResult } from "./types.js";

export interface SoriClientOptions {
  /** Where sori listens, e.g. http://127.0.0.1:8000 (no /v1). */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** Get a new token this long before the current one expires. Default 60 s. */
  refreshMarginS?: number;
  /** Polling interval of wait(); the spec recommends about 5 s. */
  pollIntervalMs?: number;
  /** Longest wait between retries after 429 (A0002 on submit, A0003 on read). Default 60 s. */
  maxBackoffMs?: number;
  /** How many times a 429 is retried before it is thrown. Default 8. */
  maxRetries?: number;
  fetch?: typeof fetch;
}

/** A failed call: the HTTP status and the server's `{code, msg}`. */
export class SoriError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "SoriError";
  }
}

/** What submit() takes: a file path, bytes, a Blob, or a readable stream (read into memory first). */
export type AudioInput = string | Uint8Array | Blob | Readable;

export interface WaitOptions {
  intervalMs?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Called with every body read while the job is not final. */
  onPoll?: (r: TranscribeResult) => void;
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });

export class SoriClient {
  private token: Token | null = null;
  private pending: Promise<Token> | null = null;
  private readonly base: string;
  private readonly doFetch: typeof fetch;

  constructor(private readonly opts: SoriClientOptions) {
    this.base = opts.baseUrl.replace(/\/+$/, "");
    this.doFetch = opts.fetch ?? fetch;
  }

  /** POST /v1/authenticate; the token is kept and reused until shortly before expire_at. */
  async authenticate(): Promise<Token> {
    const r = await this.doFetch(`${this.base}/v1/authenticate`, {
      method: "POST",
      body: new URLSearchParams({ client_id: this.opts.clientId, client_secret: this.opts.clientSecret }),
    });
    if (!r.ok) throw await toError(r);
    this.token = (await r.json()) as Token;
    return this.token;
  }

  /** A token valid for at least the refresh margin; one authenticate call at a time. */
  async accessToken(nowS = Date.now() / 1000): Promise<string> {
    const margin = this.opts.refreshMarginS ?? 60;
    if (this.token && this.token.expire_at - margin > nowS) return this.token.access_token;
    this.pending ??= this.authenticate().finally(() => (this.pending = null));
    return (await this.pending).access_token;
  }

  /** POST /v1/transcribe; returns the job id. Retries 429 A0002 (too many jobs in progress) with backoff. */
  async submit(audio: AudioInput, config: TranscribeConfig = {}, opts: { filename?: string } = {}): Promise<string> {
    const blob = await toBlob(audio);
    const filename = opts.filename ?? (typeof audio === "string" ? path.basename(audio) : "audio");
    const r = await this.call("/v1/transcribe", () => {
      const form = new FormData();
      form.append("config", JSON.stringify(config));
      form.append("file", blob, filename);
      return { method: "POST", body: form };
    }, ["A0002"]);
    return ((await r.json()) as { id: string }).id;
  }

  /** GET /v1/transcribe/{id} (with `refined`, the result=refined read). */
  async get(id: string, opts: { refined?: boolean } = {}): Promise<TranscribeResult> {
    const q = opts.refined ? "?result=refined" : "";
    const r = await this.call(`/v1/transcribe/${encodeURIComponent(id)}${q}`, () => ({ method: "GET" }), ["A0003"]);
    return (await r.json()) as TranscribeResult;
  }

  /** Polls every `intervalMs` (5 s) until the job is completed or failed. */
  async wait(id: string, opts: WaitOptions = {}): Promise<TranscribeResult> {
    const interval = opts.intervalMs ?? this.opts.pollIntervalMs ?? 5000;
    const until = opts.timeoutMs === undefined ? Infinity : Date.now() + opts.timeoutMs;
    for (;;) {
      const r = await this.get(id);
      if (r.status !== "transcribing") return r;
      opts.onPoll?.(r);
      if (Date.now() + interval > until) throw new Error(`job ${id} not final after ${opts.timeoutMs} ms`);
      await sleep(interval, opts.signal);
    }
  }

  /** GET /v1/transcribe/{id}/export: the completed transcript as SRT, WebVTT or plain text. */
  async export(id: string, format: ExportFormat): Promise<string> {
    const r = await this.call(
      `/v1/transcribe/${encodeURIComponent(id)}/export?format=${format}`,
      () => ({ method: "GET" }),
      ["A0003"],
    );
    return r.text();
  }

  /** GET /v1/transcribe: the caller's jobs, newest first; pass next_cursor back for the next page. */
  async list(
    q: { status?: "transcribing" | "completed" | "failed"; limit?: number; cursor?: string } = {},
  ): Promise<JobList> {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined) params.set(k, String(v));
    const qs = params.size ? `?${params}` : "";
    const r = await this.call(`/v1/transcribe${qs}`, () => ({ method: "GET" }), ["A0003"]);
    return (await r.json()) as JobList;
  }

  /** DELETE /v1/transcribe/{id}: audio and results are removed now. */
  async delete(id: string): Promise<void> {
    await this.call(`/v1/transcribe/${encodeURIComponent(id)}`, () => ({ method: "DELETE" }), ["A0003"]);
  }

  /**
   * One authenticated call. A 401 with a cached token gets one fresh token and one more try; a 429 with one of
   * `retryCodes` is retried with exponential backoff (1 s, 2 s, 4 s... up to maxBackoffMs).
   */
  private async call(route: string, init: () => RequestInit, retryCodes: string[]): Promise<Response> {
    let renewed = false;
    let backoff = 1000;
    for (let attempt = 0; ; attempt++) {
      const token = await this.accessToken();
      const req = init();
      const r = await this.doFetch(`${this.base}${route}`, {
        ...req,
        headers: { ...(req.headers as Record<string, string>), authorization: `Bearer ${token}` },
      });
      if (r.ok) return r;
      const err = await toError(r);
      if (r.status === 401 && !renewed) {
        renewed = true;
        this.token = null;
        continue;
      }
      if (r.status === 429 && retryCodes.includes(err.code) && attempt < (this.opts.maxRetries ?? 8)) {
        await sleep(backoff);
        backoff = Math.min(backoff * 2, this.opts.maxBackoffMs ?? 60_000);
        continue;
      }
      throw err;
    }
  }
}

async function toError(r: Response): Promise<SoriError> {
  const text = await r.text();
  try {
    const body = JSON.parse(text) as { code?: string; msg?: string };
    return new SoriError(r.status, body.code ?? "E500", body.msg ?? text);
  } catch {
    return new SoriError(r.status, "E500", text.slice(0, 200));
  }
}

async function toBlob(audio: AudioInput): Promise<Blob> {
  if (typeof audio === "string") return fs.openAsBlob(audio); // read from disk as it is sent
  if (audio instanceof Blob) return audio;
  // Node's buffers are never backed by a SharedArrayBuffer here; the casts only satisfy BlobPart's type.
  if (audio instanceof Uint8Array) return new Blob([audio as Uint8Array<ArrayBuffer>]);
  const chunks: Uint8Array[] = [];
  for await (const c of audio) chunks.push(typeof c === "string" ? Buffer.from(c) : (c as Uint8Array));
  return new Blob([Buffer.concat(chunks) as Uint8Array<ArrayBuffer>]);
}
