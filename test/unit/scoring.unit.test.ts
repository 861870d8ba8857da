// The TypeScript normal form and error rates (test/helpers/cer.ts) against the vectors that the Python side
// (engine/sori_eval/scoring.py, engine/tests/test_scoring.py) also passes: the two cannot drift apart.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { levenshtein } from "../../src/text/editDistance.js";
import { chars, normalizedCer, Tally, wer, words } from "../helpers/cer.js";

interface Vectors {
  words: { lang: string; text: string; words: string[] }[];
  cer: { lang: string; hyp: string; ref: string; edits: number; ref_chars: number }[];
  wer: { lang: string; hyp: string; ref: string; edits: number; ref_words: number }[];
}
const V = JSON.parse(
  fs.readFileSync(path.join(import.meta.dirname, "..", "fixtures", "scoring-vectors.json"), "utf8"),
) as Vectors;

test("the normal form's words are the vectors'", () => {
  for (const v of V.words) assert.deepEqual(words(v.text, v.lang), v.words, v.text);
});

test("CER: edits and reference characters are the vectors'", () => {
  for (const v of V.cer) {
    const ref = chars(v.ref, v.lang);
    assert.deepEqual([levenshtein(chars(v.hyp, v.lang), ref), ref.length], [v.edits, v.ref_chars], v.ref);
    assert.equal(normalizedCer(v.hyp, v.ref, v.lang), v.edits / Math.max(1, v.ref_chars));
  }
});

test("WER is the vectors'", () => {
  for (const v of V.wer) assert.equal(wer(v.hyp, v.ref, v.lang), v.edits / Math.max(1, v.ref_words), v.ref);
});

test("a tally is corpus level", () => {
  const t = new Tally();
  t.add("ask not", "ask not", "en");
  t.add("", "ab", "en");
  assert.deepEqual(t.norm, [2, 8]);
  assert.equal(t.cer, 0.25);
});
