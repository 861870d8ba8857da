// Batches the sessions of one stream engine into `stream_step` requests (docs/streaming.md, "Scheduling"). While
// the engine works on a step, the sessions' next steps wait here; the next request carries all of them, so the
// engine decodes the interims of all sessions in one batched pass and a final never queues behind another
// session's separate request. Interims get at most `interimShare` of the engine's time: after a step that spent
// t seconds on interims, none are asked for during t * (1 / share - 1), which leaves the rest to end-pointing and
// finals (and the CPU to batch jobs). A loaded engine thus gives fewer interims, never a growing queue. The
// interims of an utterance that has shown nothing yet are not held back (their time still counts): they are what
// a voice agent waits for, and held back under load, 18 of 44 utterances showed nothing before their final
// (docs/streaming.md, "The first words").
import type { Engine } from "../engine/client.js";
import type { StreamAudioParams, StreamAudioResult } from "../engine/streamProtocol.js";

export type StepResult = StreamAudioResult & { interim: boolean };

interface Waiting {
  params: StreamAudioParams;
  firstWords: boolean;
  resolve: (r: StepResult) => void;
  reject: (err: Error) => void;
}

export class StepBatcher {
  private waiting: Waiting[] = [];
  private busy = false;
  private interimsFrom = 0;

  constructor(
    private readonly engine: Engine,
    private readonly interimShare: number,
  ) {}

  /** One session's step; a session has at most one waiting or in flight. `firstWords`: its open utterance has
   * shown nothing yet, so an interim it asks for is decoded even while interims are held back. */
  step(params: StreamAudioParams, firstWords = false): Promise<StepResult> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ params, firstWords, resolve, reject });
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.busy || this.waiting.length === 0) return;
    this.busy = true;
    const batch = this.waiting;
    this.waiting = [];
    const interimsAllowed = Date.now() >= this.interimsFrom;
    try {
      const r = await this.engine.streamStep({
        steps: batch.map((w) => ({ ...w.params, interim: w.params.interim && (interimsAllowed || w.firstWords) })),
      });
      if (r.interim_s > 0) this.interimsFrom = Date.now() + r.interim_s * 1000 * (1 / this.interimShare - 1);
      batch.forEach((w, i) => {
        const item = r.results[i];
        if (!item) w.reject(new Error("the engine gave no result for this session"));
        else if ("error" in item) w.reject(new Error(`${item.error.code}: ${item.error.msg}`));
        else w.resolve(item);
      });
    } catch (err) {
      for (const w of batch) w.reject(err instanceof Error ? err : new Error(String(err)));
    } finally {
      this.busy = false;
    }
    void this.next();
  }
}
