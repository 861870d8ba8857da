// Speaker diarization through the real API, the real engine and the real models: a two-speaker recording with
// reference turns (.rttm) must come back with two distinct `spk` values that match who actually spoke.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

interface Utterance {
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
  words?: { start_at: number; duration: number; text: string }[];
}

interface RefTurn {
  start: number; // ms
  end: number;
  speaker: string;
}

function readRttm(file: string): RefTurn[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("SPEAKER"))
    .map((l) => {
      const p = l.split(/\s+/);
      const start = Math.round(Number(p[3]) * 1000);
      return { start, end: start + Math.round(Number(p[4]) * 1000), speaker: p[7]! };
    });
}

/** The reference speaker who talks most during [start, end), or null when nobody does. */
function refSpeaker(ref: RefTurn[], start: number, end: number): string | null {
  const talk = new Map<string, number>();
  for (const t of ref) {
    const ov = Math.min(end, t.end) - Math.max(start, t.start);
    if (ov > 0) talk.set(t.speaker, (talk.get(t.speaker) ?? 0) + ov);
  }
  let best: string | null = null;
  for (const [spk, ms] of talk) if (best === null || ms > talk.get(best)!) best = spk;
  return best;
}

/**
 * Share of the utterances' speech time (those overlapping a reference turn) whose `spk` agrees with the reference
 * under the best one-to-one mapping of the two labels, found by trying both mappings.
 */
function agreement(utterances: Utterance[], ref: RefTurn[]): number {
  const names = [...new Set(ref.map((t) => t.speaker))].sort();
  let direct = 0;
  let swapped = 0;
  let total = 0;
  for (const u of utterances) {
    const who = refSpeaker(ref, u.start_at, u.start_at + u.duration);
    if (who === null) continue;
    total += u.duration;
    const idx = names.indexOf(who);
    if (u.spk === idx) direct += u.duration;
    if (u.spk === 1 - idx) swapped += u.duration;
  }
  return total === 0 ? 0 : Math.max(direct, swapped) / total;
}

function checkShape(utterances: Utterance[], words: boolean): void {
  assert.ok(utterances.length > 0);
  let previous = 0;
  const seen: number[] = [];
  for (const u of utterances) {
    assert.ok(Number.isInteger(u.start_at) && Number.isInteger(u.duration) && u.duration >= 0, JSON.stringify(u));
    assert.ok(u.start_at >= previous, "utterances are in time order");
    previous = u.start_at;
    assert.ok(u.msg.trim().length > 0);
    assert.ok(Number.isInteger(u.spk) && u.spk >= 0);
    if (!seen.includes(u.spk)) {
      assert.equal(u.spk, seen.length, "spk ids are 0..N-1 in order of first appearance");
      seen.push(u.spk);
    }
    // The pipeline asks the engine for words to diarize; they reach the client only when it asked for them.
    if (!words) assert.equal(u.words, undefined);
  }
}

describe("end to end: speaker diarization", () => {
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

  async function run(file: string, config: object): Promise<Utterance[]> {
    const r = await submit(url, token, path.join(TESTDATA, file), config);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const body = await waitFinal(url, token, String(r.body.id), 600_000);
    assert.equal(body.status, "completed", JSON.stringify(body));
    return body.results.utterances as Utterance[];
  }

  function report(t: TestContext, utterances: Utterance[], score: number): void {
    t.diagnostic(`speaker agreement ${(score * 100).toFixed(1)} %`);
    for (const u of utterances)
      t.diagnostic(`[${u.spk}] ${(u.start_at / 1000).toFixed(2)}+${(u.duration / 1000).toFixed(2)} ${u.msg}`);
  }

  it("two Korean speakers, spk_count 2: two spk values that follow the reference turns", async (t) => {
    const base = "multi/deeply_ko_dialogue_constructed";
    const utterances = await run(`${base}.wav`, { use_diarization: true, diarization: { spk_count: 2 } });
    checkShape(utterances, false);
    const score = agreement(utterances, readRttm(path.join(TESTDATA, `${base}.rttm`)));
    report(t, utterances, score);
    assert.deepEqual([...new Set(utterances.map((u) => u.spk))].sort(), [0, 1]);
    assert.ok(score >= 0.85, `speaker agreement ${score}`);
  });

  it("two English speakers, spk_count 0 (estimated), with word timestamps", async (t) => {
    const base = "multi/pyannote_sample";
    const utterances = await run(`${base}.wav`, {
      model_name: "whisper",
      language: "detect",
      language_candidates: ["en"],
      use_word_timestamp: true,
      use_diarization: true,
      diarization: { spk_count: 0 },
    });
    checkShape(utterances, true);
    const score = agreement(utterances, readRttm(path.join(TESTDATA, `${base}.rttm`)));
    report(t, utterances, score);
    assert.deepEqual([...new Set(utterances.map((u) => u.spk))].sort(), [0, 1]);
    assert.ok(score >= 0.8, `speaker agreement ${score}`);
  });

  it("use_diarization false: every spk is 0", async () => {
    const utterances = await run("multi/pyannote_sample.wav", {
      model_name: "whisper",
      language: "detect",
      language_candidates: ["en"],
    });
    assert.ok(utterances.length > 0 && utterances.every((u) => u.spk === 0));
  });
});
