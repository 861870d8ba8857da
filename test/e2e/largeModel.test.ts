// A model of large-v3's shape brought in through SORI_MODELS_FILE (docs/models.md) runs through `sori serve`: a
// batch job with diarization and a streaming session. Its weights are random (engine/tests/large_v3_shape.py: 128
// mel bins, large-v3's 100 languages and vocabulary, a few MB), so its text is garbage: the test asserts that the
// jobs complete and what holds whatever the words, never the words.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import WebSocket from "ws";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";
import { connectStream } from "../helpers/streamSocket.js";
import { phoneCopy } from "../streaming/phoneCopy.js";

const CLIP = "multi/deeply_ko_dialogue_constructed.wav";
const STREAM_CLIP = "ko/deeply_anechoic_sub100120a00053.wav";

interface Utterance {
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
}

/** The random large-v3-shaped model directory, and a registry file that points both API names at it. */
function largeModelRegistry(dir: string): string {
  const modelDir = path.join(dir, "large-v3-shape");
  const r = spawnSync(
    path.join(ROOT, ".venv", "bin", "python"),
    [path.join(ROOT, "engine", "tests", "large_v3_shape.py"), path.join(ROOT, "models", "whisper-base"), modelDir],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`building the model failed: ${r.stderr}`);
  const entry = { path: "large-v3-shape", device: "cpu", compute_type: "int8", beam_size: 1, vad: true };
  const file = path.join(dir, "models.json");
  fs.writeFileSync(file, JSON.stringify({ sommers: entry, whisper: entry }));
  return file;
}

describe("end to end: a large-v3-shaped model", { timeout: 600_000 }, () => {
  let sori: SoriProcess;
  let token: string;

  before(async () => {
    const dataDir = tempDataDir();
    const env = {
      SORI_DATA_DIR: dataDir,
      SORI_PORT: "0",
      SORI_WORKERS: "1",
      SORI_POLL_MS: "200",
      SORI_STREAM_SESSIONS: "1",
      SORI_MODELS_FILE: largeModelRegistry(dataDir),
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    token = await authenticate(sori.url, c.client_id, c.client_secret);
  });
  after(() => sori?.stop());

  it("a batch job with diarization completes, its utterances inside the file and in time order", async (t) => {
    const r = await submit(sori.url, token, path.join(TESTDATA, CLIP), {
      model_name: "whisper",
      language: "detect",
      language_candidates: ["ko", "en"],
      use_word_timestamp: true,
      use_diarization: true,
      diarization: { spk_count: 2 },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const body = await waitFinal(sori.url, token, String(r.body.id), 300_000);
    assert.equal(body.status, "completed", JSON.stringify(body));
    const utterances = body.results.utterances as Utterance[];
    t.diagnostic(`${utterances.length} utterances, speakers ${[...new Set(utterances.map((u) => u.spk))]}`);
    let previous = 0;
    for (const u of utterances) {
      assert.ok(Number.isInteger(u.start_at) && u.start_at >= previous && u.duration >= 0, JSON.stringify(u));
      assert.ok(u.start_at + u.duration <= 70_000, JSON.stringify(u)); // the dialogue is 69 s
      assert.ok(u.msg.trim().length > 0 && Number.isInteger(u.spk) && u.spk >= 0 && u.spk < 2);
      previous = u.start_at;
    }
  });

  it("a streaming session answers and closes cleanly", async (t) => {
    const socket = await connectStream(
      sori.url.replace("http://", "ws://"),
      "sample_rate=8000&encoding=LINEAR16&model_name=whisper&language=ko&epd_time=0.5",
      `bearer ${token}`,
    );
    assert.ok(socket instanceof WebSocket, JSON.stringify(socket));
    const answers: Record<string, unknown>[] = [];
    socket.on("message", (data) => answers.push(JSON.parse(data.toString())));
    const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
    const pcm = fs.readFileSync(phoneCopy(path.join(TESTDATA, STREAM_CLIP)));
    const step = 8000; // half a second of 8 kHz s16le
    for (let i = 0; i < pcm.length; i += step) {
      socket.send(pcm.subarray(i, i + step));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    socket.send("EOS");
    assert.equal(await closed, 1000, JSON.stringify(answers));
    t.diagnostic(`${answers.length} answers, ${answers.filter((a) => a.final).length} final`);
    for (const a of answers) {
      assert.ok(!("code" in a), JSON.stringify(a)); // no error answer
      const start = a.start_at as number;
      const duration = a.duration as number;
      assert.ok(Number.isInteger(start) && Number.isInteger(duration) && start >= 0 && duration >= 0);
      assert.ok(start + duration <= 6_000, JSON.stringify(a)); // the clip is 5.2 s
    }
  });
});
