// The engines that decode streaming sessions: processes of their own, apart from the workers' batch engines, at
// the service's own CPU priority while batch engines run niced (SORI_ENGINE_NICE), so batch decoding yields the
// CPU to sessions, which are latency-bound. A session stays on the engine that holds its state.
import { Engine } from "../engine/client.js";

export class StreamEngines {
  private readonly engines: { engine: Engine; sessions: number }[];

  constructor(count: number, python: string, onLog: (line: string) => void) {
    this.engines = Array.from({ length: count }, () => ({ engine: new Engine({ python, onLog }), sessions: 0 }));
  }

  /** The engine with the fewest sessions; `release` gives the place back. */
  acquire(): { engine: Engine; release: () => void } {
    const slot = this.engines.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    slot.sessions++;
    let released = false;
    return {
      engine: slot.engine,
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
