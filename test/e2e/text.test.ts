// The text options through the real API on real audio: each option visibly changes the result.
//
// untranscribed/vito_java_sample_8k.wav is a 44 s Korean phone memo (8 kHz) that reads out acronyms, an amount,
// a phone number, a date and time, units, then hesitates ("어... 어...", "어제... 어제", "음...") and swears: it
// exercises ITN, the disfluency filter and the profanity filter at once. en/earnings22_* are 60 s earnings calls
// with "uh"/"um" and long sentences.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

interface Utterance {
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
  lang: string;
  words?: { start_at: number; duration: number; text: string }[];
}

const PHONE_MEMO = "untranscribed/vito_java_sample_8k.wav";
const EARNINGS_FILLERS = "en/earnings22_1_4482311_3_62.wav";
const EARNINGS_LONG = "en/earnings22_3_4483589_261_321.wav";
const SAMGYETANG = "ko/deeply_studioapt_sub100101a00002.wav"; // "... 다음에 삼계탕 한번 먹으러 가야겠어요."
const EN = { model_name: "whisper", language: "en" }; // the RTZR-style config for English
const KO_FILLER = /(?:^|\s)(?:어|음|아|으)(?=[\s,.…]|$)/u;
const EN_FILLER = /\b(?:uh|um)\b/iu;

describe("end to end: text options on real speech", () => {
  let sori: SoriProcess;
  let url: string;
  let token: string;

  before(async () => {
    const env = { SORI_DATA_DIR: tempDataDir(), SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200" };
    const c = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c.client_id, c.client_secret);
  });
  after(() => sori.stop());

  async function transcribe(t: TestContext, file: string, config: object): Promise<Utterance[]> {
    const r = await submit(url, token, path.join(TESTDATA, file), config);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const body = await waitFinal(url, token, String(r.body.id));
    assert.equal(body.status, "completed", JSON.stringify(body));
    const utterances = body.results.utterances as Utterance[];
    t.diagnostic(`${file} ${JSON.stringify(config)}: ${utterances.map((u) => u.msg).join(" | ")}`);
    return utterances;
  }
  const text = (us: Utterance[]): string => us.map((u) => u.msg).join(" ");

  it("use_itn: digits and acronyms by default, spoken forms without", async (t) => {
    const on = text(await transcribe(t, PHONE_MEMO, {}));
    const off = text(await transcribe(t, PHONE_MEMO, { use_itn: false }));
    assert.match(on, /\d/u);
    assert.doesNotMatch(off, /[0-9]/u, "no digits with use_itn false");
    // The acronym as the model spelled it out (케이비에스 on the machines measured) is written KBS by ITN; whether
    // the model spells it so depends on the CPU (test/README.md), what ITN makes of it does not.
    if (/케이비에스/u.test(off)) assert.match(on, /KBS/u);
    else t.diagnostic(`the model did not spell KBS out here: ${off}`);
    assert.match(off, /[일이삼사오육칠팔구십백천만] ?(?:월|일|원|분)/u);
  });

  it("use_disfluency_filter: fillers and restarts go by default, are kept (verbatim prompt) without", async (t) => {
    const on = text(await transcribe(t, PHONE_MEMO, {}));
    const off = text(await transcribe(t, PHONE_MEMO, { use_disfluency_filter: false }));
    assert.doesNotMatch(on, KO_FILLER);
    assert.match(off, KO_FILLER);
    const enOn = text(await transcribe(t, EARNINGS_FILLERS, EN));
    const enOff = text(await transcribe(t, EARNINGS_FILLERS, { ...EN, use_disfluency_filter: false }));
    assert.doesNotMatch(enOn, EN_FILLER);
    assert.match(enOff, EN_FILLER);
  });

  it("use_profanity_filter: the insult is masked with * per character, nothing else", async (t) => {
    const off = text(await transcribe(t, PHONE_MEMO, {}));
    const on = text(await transcribe(t, PHONE_MEMO, { use_profanity_filter: true }));
    assert.doesNotMatch(off, /\*/u);
    assert.match(on, /\*{3}/u);
    assert.equal(on.replace(/\*/gu, "").length < off.length, true);
    assert.equal(on.length, off.length, "masking keeps every character's place");
  });

  it("keywords: a proper noun the model misses is found with it as a keyword", async (t) => {
    const without = text(await transcribe(t, SAMGYETANG, {}));
    const withKeyword = text(await transcribe(t, SAMGYETANG, { keywords: ["삼계탕"] }));
    // whisper-base writes 삼계탄 on its own; a stronger model may not need the keyword.
    if (/삼계탕/u.test(without)) t.diagnostic("the model finds 삼계탕 without the keyword");
    assert.match(withKeyword, /삼계탕/u);
  });

  it("use_paragraph_splitter: paragraphs of whole sentences up to max characters, timed by their words; off: one utterance", async (t) => {
    const paragraphs = await transcribe(t, EARNINGS_LONG, { ...EN, use_word_timestamp: true });
    for (const u of paragraphs) {
      // A sentence is never cut (the real service's rule), so only a single sentence may be longer than max.
      assert.ok([...u.msg].length <= 50 || !/[.?!]\s/u.test(u.msg), `over 50 and more than one sentence: ${u.msg}`);
      assert.ok(u.words && u.words.length > 0);
      assert.equal(u.start_at, u.words[0]!.start_at, "a paragraph starts with its first word");
      const last = u.words[u.words.length - 1]!;
      assert.equal(u.start_at + u.duration, Math.max(...u.words.map((w) => w.start_at + w.duration)));
      assert.ok(last.start_at >= u.start_at);
    }
    const wide = await transcribe(t, EARNINGS_LONG, { ...EN, paragraph_splitter: { max: 200 } });
    assert.ok(wide.length < paragraphs.length, "a larger max gives fewer paragraphs");
    assert.ok(
      wide.every((u) => u.words === undefined),
      "no words unless asked for",
    );
    // Off, as the real service: one speaker, no diarization: the whole file is one utterance.
    const whole = await transcribe(t, EARNINGS_LONG, { ...EN, use_paragraph_splitter: false });
    assert.equal(whole.length, 1);
  });
  it("use_pii_redaction (docs/pii.md): the memo's phone number is masked in msg and words, written or spoken", async (t) => {
    // What holds on any CPU: no phone number is left in any form, the near-misses around it (amount, date, time)
    // stay, and word times stay in order.
    const PHONE = /01[016789][\s-]?\d{3,4}[\s-]?\d{4}|공일공|영일영/u;
    for (const config of [{ use_word_timestamp: true }, { use_word_timestamp: true, use_itn: false }]) {
      const us = await transcribe(t, PHONE_MEMO, { ...config, use_pii_redaction: true });
      const words = us.flatMap((u) => u.words ?? []);
      assert.doesNotMatch(text(us), PHONE);
      assert.doesNotMatch(words.map((w) => w.text).join(" "), PHONE);
      assert.ok(
        words.every((w, i) => i === 0 || w.start_at >= words[i - 1]!.start_at),
        "word times in order",
      );
      assert.match(text(us), config.use_itn === false ? /월|원|분/u : /\d/u, "amounts, dates and times stay");
    }
  });
});
