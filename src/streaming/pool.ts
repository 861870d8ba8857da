// The engines that decode streaming sessions: processes of their own, apart from the workers' batch engines, at
// the service's own CPU priority while batch engines run niced (SORI_ENGINE_NICE), so batch decoding yields the
// CPU to sessions, which are latency-bound. A session stays on the engine that holds its state; each engine's
// sessions are stepped together (steps.ts).
import { Engine } from "../engine/client.js";
import { StepBatcher } from "./steps.js";

export class StreamEngines {
  private readonly engines: { engine: Engine; steps: StepBatcher; sessions: number }[];

  constructor(count: number, python: string, interimShare: number, onLog: (line: string) => void) {
    this.engines = Array.from({ length: count }, () => {
      const engine = new Engine({ python, onLog });
      return { engine, steps: new StepBatcher(engine, interimShare), sessions: 0 };
    });
  }

  /** The engine with the fewest sessions; `release` gives the place back. */
  acquire(): { engine: Engine; steps: StepBatcher; release: () => void } {
    const slot = this.engines.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    slot.sessions++;
    let released = false;
    return {
      engine: slot.engine,
      steps: slot.steps,
      release: () => {
        if (!released) slot.sessions--;
        released = true;
      },
    };
  }

  async stop(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.engine.stop()));
  }
}
