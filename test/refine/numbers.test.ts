// Refinement on real audio (the engine, whisper-base int8) does not change a correct number: issue 48's clip, where
// the earlier rule turned "기간이 20일입니다" into "기가능이 11입니다". The decodes may differ on this CPU, so the test
// asserts the invariant (the number stays, no other number appears), not the words around it.
import assert from "node:assert/strict";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parseJobConfig } from "../../src/domain/jobConfig.js";
import type { Utterance } from "../../src/domain/utterance.js";
import { Engine } from "../../src/engine/client.js";
import { defaultRegistry } from "../../src/engine/models.js";
import { defaultRefinerSettings, refineUtterances } from "../../src/refine/refiner.js";
import { ROOT, TESTDATA } from "../helpers/server.js";

const engine = new Engine({ python: path.join(ROOT, ".venv", "bin", "python") });
after(() => engine.stop());

const CLIP = path.join(TESTDATA, "ko/deeply_studioapt_sub100100a00088.wav"); // 다섯 권까지 빌릴 수 있고, 기간은 20일입니다.
const digits = (s: string): string[] => s.match(/\d+/g) ?? [];

describe("refinement keeps a correct number", () => {
  const defaults = defaultRefinerSettings(defaultRegistry(path.join(ROOT, "models")).sommers);
  // The default changes no language (docs/enterprise.md); the agreement rule it keeps is enabled for ko here, so
  // that the decodes really run on the clip.
  for (const [name, settings] of [
    ["the agreement rule, enabled for ko", { ...defaults, rule: { ...defaults.rule, languages: ["ko"] } }],
    ["the default", defaults],
  ] as const) {
    it(`${name}: the 20일 of the shared Korean clip stays 20일`, async () => {
      const base: Utterance = {
        start_at: 0,
        duration: 2860,
        msg: "5건까지 빌릴 수 있고 기간이 20일입니다.",
        spk: 0,
        lang: "ko",
      };
      const config = parseJobConfig(JSON.stringify({ language: "ko", use_refinement: true }));
      const out = await refineUtterances([base], config, CLIP, { engine, settings, maxAudioS: 60, timeoutMs: 300_000 });
      const msg = out.utterances[0]!.msg;
      assert.match(msg, /20일/, msg);
      assert.deepEqual(digits(msg), digits(base.msg), `no number changed: ${msg}`);
      assert.equal(out.utterances[0]!.start_at, 0);
      assert.equal(out.utterances[0]!.duration, 2860);
    });
  }
});
