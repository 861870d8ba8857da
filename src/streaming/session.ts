// One streaming session: audio frames and text frames in, RTZR answers out (docs/streaming.md). The session owns
// the connection's limits (idle time, length, token expiry, frame size) and feeds the engine, which end-points and
// decodes (engine op `stream_step`, batched with the engine's other sessions: steps.ts). At most one step per
// session is waiting or in flight: audio that arrives meanwhile goes with the next step, so a slow engine makes
// steps larger, never a queue that grows.
import type { Engine } from "../engine/client.js";
import type { ModelRegistry } from "../engine/models.js";
import type { StreamEvent } from "../engine/streamProtocol.js";
import { recordStreamAudio, recordStreamLatency } from "../metrics/index.js";
import { decoderHints } from "../text/index.js";
import { type StreamAnswer, toAnswer } from "./answer.js";
import { expandG711 } from "./g711.js";
import type { StreamQuery } from "./query.js";
import type { StepBatcher, StepResult } from "./steps.js";

/** WebSocket close codes (docs/streaming.md, "Errors"). 1000 and 1009 are sent by the socket layer itself. */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  unsupportedData: 1003,
  invalidPayload: 1007,
  policy: 1008,
  tooBig: 1009,
  internal: 1011,
  idle: 4000,
  maxLength: 4001,
  quota: 4002,
} as const;

export interface SessionLimits {
  maxS: number;
  idleS: number;
  interimMs: number;
  /** Audio seconds the client's usage quota has left (Infinity without a quota): past them, close 4002 A0001. */
  quotaLeftS: number;
}

export interface SessionIo {
  send(answer: StreamAnswer | { error: { code: string; msg: string } }): void;
  /** Close the connection; called once. */
  close(code: number, reason: string): void;
}

export interface SessionDeps {
  engine: Engine;
  /** Where this session's steps go: its engine's batcher. */
  steps: Pick<StepBatcher, "step">;
  models: ModelRegistry;
  limits: SessionLimits;
  /** Epoch ms at which the token the connection was opened with expires. */
  tokenExpiresAt: number;
  io: SessionIo;
  /** Called once when the session is over, whatever ended it (with the close code and the audio seconds received). */
  onEnd: (code: number, audioS: number) => void;
  log: (msg: string, err?: unknown) => void;
}

/** The text frames a client may send: EOS ends the stream; pipecat-rtzr's Finalize closes the open utterance. */
const FINALIZE = /^\s*\{\s*"type"\s*:\s*"Finalize"\s*\}\s*$/u;

export class StreamSession {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private busy = false;
  private finishing = false;
  private finalizeAsked = false;
  private ended = false;
  private lastInterim = 0;
  private seq = 0;
  private interimSentForSeq = false;
  private firstInterimForSeq = true;
  /** Session seconds of audio received, and when each step of it arrived: latencies are measured from these. */
  private receivedS = 0;
  private arrivals: { s: number; at: number }[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private idleTimer: NodeJS.Timeout | null = null;
  private opened: Promise<void>;

  constructor(
    private readonly id: string,
    private readonly q: StreamQuery,
    private readonly deps: SessionDeps,
  ) {
    const model = q.domain === "CALL" ? { ...deps.models[q.model], vad: false } : deps.models[q.model];
    const hints = decoderHints({
      language: q.language,
      use_disfluency_filter: q.use_disfluency_filter,
      keywords: q.keywords?.map((k) => k.word),
      use_itn: q.use_itn,
      use_profanity_filter: q.use_profanity_filter,
      use_paragraph_splitter: false,
      paragraph_splitter: { max: 50 },
      use_word_timestamp: false,
    });
    this.opened = deps.engine.streamOpen({
      session: id,
      sample_rate: q.sample_rate,
      epd_time: q.epd_time,
      decode: {
        // domain CALL decodes without the VAD, as a batch CALL job does (src/pipeline/run.ts).
        model,
        language_mode: "fixed",
        language: q.language,
        language_candidates: null,
        word_timestamps: false,
        ...hints,
      },
    });
    this.opened.catch((err) => this.fail("E500", "the recognizer could not start", CLOSE.internal, err));
    const now = Date.now();
    this.timers.push(
      setTimeout(
        () => this.fail("H0006", `the session reached its maximum length (${deps.limits.maxS} s)`, CLOSE.maxLength),
        deps.limits.maxS * 1000,
      ),
      setTimeout(
        () => this.fail("H0002", "the access token expired", CLOSE.policy),
        Math.max(0, Math.min(deps.tokenExpiresAt - now, 2 ** 31 - 1)),
      ),
    );
    this.touch();
  }

  /** A binary frame: audio in the session's encoding. */
  onAudio(data: Buffer): void {
    if (this.ended || this.finishing) return;
    let pcm = data;
    if (this.q.encoding !== "LINEAR16") pcm = expandG711(data, this.q.encoding);
    else if (data.length % 2 !== 0) {
      this.fail(
        "H0001",
        "LINEAR16 audio must be whole 16-bit samples (a frame had an odd byte count)",
        CLOSE.invalidPayload,
      );
      return;
    }
    this.touch();
    this.pending.push(pcm);
    this.pendingBytes += pcm.length;
    const seconds = pcm.length / 2 / this.q.sample_rate;
    this.receivedS += seconds;
    this.arrivals.push({ s: this.receivedS, at: Date.now() });
    recordStreamAudio(seconds);
    if (this.receivedS > this.deps.limits.quotaLeftS) {
      this.fail("A0001", "the audio usage quota is used up", CLOSE.quota);
      return;
    }
    void this.pump();
  }

  /** A text frame: `EOS` or `{"type":"Finalize"}`; anything else ends the session. */
  onText(text: string): void {
    if (this.ended) return;
    if (text.trim() === "EOS") {
      this.finishing = true;
      // The client now waits for us: no idle limit while the last final is decoded (a cold engine loads its model).
      if (this.idleTimer) clearTimeout(this.idleTimer);
      void this.pump();
    } else if (FINALIZE.test(text)) {
      this.finalizeAsked = true;
      void this.pump();
    } else {
      this.fail(
        "H0001",
        'a text frame must be "EOS" (or {"type":"Finalize"}); audio goes in binary frames',
        CLOSE.unsupportedData,
      );
    }
  }

  /** The connection closed under us (the client left): free the engine's state. */
  onClosed(): void {
    if (this.ended) return;
    this.end(CLOSE.goingAway);
    this.deps.engine.streamClose(this.id).catch(() => undefined);
  }

  /** Ends the session with an error answer and a close code. */
  fail(code: string, msg: string, closeCode: number, err?: unknown): void {
    if (this.ended) return;
    if (err) this.deps.log(`stream session ${this.id}: ${msg}`, err);
    this.deps.io.send({ error: { code, msg } });
    this.end(closeCode, msg);
    this.deps.engine.streamClose(this.id).catch(() => undefined);
  }

  private end(code: number, reason = ""): void {
    this.ended = true;
    for (const t of this.timers) clearTimeout(t);
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (code !== CLOSE.goingAway) this.deps.io.close(code, reason.slice(0, 120)); // a close reason is at most 123 bytes
    this.deps.onEnd(code, this.receivedS);
  }

  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(
      () => this.fail("H0001", `no audio for ${this.deps.limits.idleS} s`, CLOSE.idle),
      this.deps.limits.idleS * 1000,
    );
  }

  private async pump(): Promise<void> {
    if (this.busy || this.ended) return;
    // Until the open utterance has shown something, every step asks for an interim, and the batcher does not hold
    // it back (steps.ts): the first words are what a voice agent waits for (barge-in).
    const firstWords = !this.interimSentForSeq;
    const interimDue = firstWords || Date.now() - this.lastInterim >= this.deps.limits.interimMs;
    if (this.pendingBytes === 0 && !this.finishing && !this.finalizeAsked) return;
    this.busy = true;
    const pcm = Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    const finish = this.finishing;
    const finalize = this.finalizeAsked;
    this.finalizeAsked = false;
    let result: StepResult;
    try {
      await this.opened;
      result = await this.deps.steps.step(
        { session: this.id, pcm: pcm.toString("base64"), interim: interimDue, finalize, finish },
        firstWords,
      );
    } catch (err) {
      this.busy = false;
      this.fail("E500", "the recognizer failed; the session cannot go on", CLOSE.internal, err);
      return;
    }
    this.busy = false;
    if (this.ended) return;
    if (result.interim) this.lastInterim = Date.now();
    for (const event of result.events) this.emit(event);
    if (finish) {
      this.end(CLOSE.normal, "end of stream");
      return;
    }
    void this.pump();
  }

  private emit(event: StreamEvent): void {
    const answer = toAnswer(event, this.seq, this.q);
    const text = answer.alternatives[0]?.text ?? "";
    if (!event.final) {
      if (!text) return;
      if (this.firstInterimForSeq) {
        recordStreamLatency("first_interim", (Date.now() - this.arrivedAt(event.speech_start)) / 1000);
        this.firstInterimForSeq = false;
      }
      this.interimSentForSeq = true;
      this.deps.io.send(answer);
      return;
    }
    recordStreamLatency("final", (Date.now() - this.arrivedAt(event.decided_at)) / 1000);
    // An utterance that came out empty (noise the hallucination stage removed) gets no final, unless interims
    // were shown for it: then an empty final tells the client they are void.
    if (text || this.interimSentForSeq) this.deps.io.send(answer);
    this.seq++;
    this.interimSentForSeq = false;
    this.firstInterimForSeq = true;
  }

  /** Wall time (epoch ms) at which the audio up to session second `s` had been received. */
  private arrivedAt(s: number): number {
    const a = this.arrivals;
    let lo = 0;
    let hi = a.length - 1;
    if (hi < 0) return Date.now();
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (a[mid]!.s + 1e-6 >= s) hi = mid;
      else lo = mid + 1;
    }
    // Arrivals before the open utterance are not needed again; keep the list short on long sessions.
    if (lo > 1000) this.arrivals = a.slice(lo - 1);
    return a[lo]!.at;
  }
}
