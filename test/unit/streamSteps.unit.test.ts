// The stream engine's step batcher (src/streaming/steps.ts): how interims are held back after a step that spent
// time on them, and that an utterance's first words are not. The engine is a stand-in that records what it is asked
// and says how long interims took; the batcher decides only what to ask.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Engine } from "../../src/engine/client.js";
import type { StreamAudioParams, StreamStepParams, StreamStepResult } from "../../src/engine/streamProtocol.js";
import { StepBatcher } from "../../src/streaming/steps.js";

function recordingEngine(interimS: number): { engine: Engine; asked: StreamAudioParams[][] } {
  const asked: StreamAudioParams[][] = [];
  const stand = {
    async streamStep(p: StreamStepParams): Promise<StreamStepResult> {
      asked.push(p.steps);
      const decoded = p.steps.some((s) => s.interim);
      return {
        results: p.steps.map((s) => ({
          session: s.session,
          events: [],
          interim: s.interim,
          received_s: 0,
          pending_s: 0,
        })),
        interim_s: decoded ? interimS : 0,
      };
    },
  };
  return { engine: stand as unknown as Engine, asked };
}

const step = (session: string): StreamAudioParams => ({
  session,
  pcm: "",
  interim: true,
  finalize: false,
  finish: false,
});

describe("stream step batcher", () => {
  it("holds interims back after a step that spent time on them, for t × (1/share − 1)", async () => {
    const { engine, asked } = recordingEngine(10); // 10 s of interims at share 0.5: none for the next 10 s
    const steps = new StepBatcher(engine, 0.5);
    assert.equal((await steps.step(step("a"))).interim, true);
    assert.equal((await steps.step(step("a"))).interim, false);
    assert.deepEqual(
      asked.map((a) => a[0]!.interim),
      [true, false],
    );
  });

  it("still decodes an utterance's first words while interims are held back", async () => {
    const { engine } = recordingEngine(10);
    const steps = new StepBatcher(engine, 0.5);
    await steps.step(step("a"));
    assert.equal((await steps.step(step("a"), true)).interim, true);
    assert.equal((await steps.step(step("b"))).interim, false);
  });
});
