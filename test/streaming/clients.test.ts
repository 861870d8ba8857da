// The public RTZR streaming clients, installed from PyPI into .venv-stream (make .venv-stream) and changed in
// nothing but their base URL and credentials (test/streaming/rtzr_clients.py), transcribe shared Korean audio fed
// at real-time pace against `sori serve`, while a batch job runs beside them. Bounds, never exact words.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { manifest, normalizedCer } from "../helpers/cer.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";
import { runDriver, STREAM_PYTHON } from "./driver.js";
import { phoneCopy } from "./phoneCopy.js";

const CLIP = "ko/deeply_anechoic_sub100120a00053.wav";
const DIALOGUE = "multi/deeply_ko_dialogue_constructed";

interface Event {
  kind: "interim" | "final" | "done";
  text: string;
  t: number;
}

async function drive(client: "livekit" | "pipecat", url: string, raw: string, creds: { id: string; secret: string }) {
  const events = await runDriver<Event>("rtzr_clients.py", [client, url, raw, "8000", "0.5"], creds);
  if (events.at(-1)?.kind !== "done") throw new Error(`${client} did not finish: ${JSON.stringify(events.at(-1))}`);
  return events;
}

const present = fs.existsSync(STREAM_PYTHON);

describe(
  "streaming: the public RTZR clients",
  { skip: present ? false : "no .venv-stream (make .venv-stream)", timeout: 300_000 },
  () => {
    let sori: SoriProcess;
    let creds: { id: string; secret: string };

    before(async () => {
      const env = { SORI_DATA_DIR: tempDataDir(), SORI_WORKERS: "1", SORI_PORT: "0", SORI_STREAM_SESSIONS: "2" };
      const c = createClient(env);
      creds = { id: c.client_id, secret: c.client_secret };
      sori = await startSori("serve", env);
    });
    after(() => sori?.stop());

    it("pipecat-rtzr: a sentence on an 8 kHz line gives interims and a final close to the reference", async (t) => {
      const events = await drive("pipecat", sori.url, phoneCopy(path.join(TESTDATA, CLIP)), creds);
      const finals = events.filter((e) => e.kind === "final");
      assert.equal(finals.length, 1, JSON.stringify(events));
      const ref = manifest(TESTDATA).get(CLIP)!;
      assert.ok(normalizedCer(finals[0]!.text, ref) <= 0.3, `${finals[0]!.text} | ${ref}`);
    });

    it("livekit-plugins-rtzr: the 69 s dialogue, while a batch job runs beside it", async (t) => {
      const token = await authenticate(sori.url, creds.id, creds.secret);
      const job = await submit(sori.url, token, path.join(TESTDATA, CLIP), { model_name: "sommers", language: "ko" });
      const streamed = drive("livekit", sori.url, phoneCopy(path.join(TESTDATA, `${DIALOGUE}.wav`)), creds);
      const batch = await waitFinal(sori.url, token, job.body.id as string);
      assert.equal(batch.status, "completed");
      const events = await streamed;
      const finals = events.filter((e) => e.kind === "final");
      assert.ok(finals.length >= 3, `finals: ${finals.length}`);
      assert.ok(events.some((e) => e.kind === "interim"));
      // Finals arrive in order and while the audio plays, not all at the end.
      assert.ok(finals[0]!.t < 40, `first final at ${finals[0]!.t} s`);
      const ref = fs
        .readFileSync(path.join(TESTDATA, `${DIALOGUE}.stm`), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split(" ").slice(5).join(" "))
        .join(" ");
      const cer = normalizedCer(finals.map((f) => f.text).join(" "), ref);
      t.diagnostic(`${finals.length} finals, ${events.length - finals.length - 1} interims, CER ${cer.toFixed(3)}`);
      assert.ok(cer <= 0.25, `CER ${cer.toFixed(3)}`);
    });
  },
);
