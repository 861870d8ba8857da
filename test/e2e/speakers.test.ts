// Known speakers through `sori serve` with the real engine and models (docs/speakers.md): two Korean speakers
// enrolled from clips; a conversation built from *other* clips of both and a third, unenrolled speaker (JFK), with
// quiet room tone between turns; the enrolled speakers' speech must carry their names (at least 95 % of its time),
// the third speaker's none, on the phone too (through the enrolled voices' phone prints); with all three forced into
// one speaker, only the enrolled voice's own turns are named.
// Then the refusals (too little speech, several voices, a bad format, bad names, unknown ids), one person enrolled
// from a studio clip and a call accepted, tenancy (another client sees nothing and gets 404 H0004), and a delete that
// removes the voiceprint from the store.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import Sqlite from "better-sqlite3";
import { VOICEPRINT_MODEL } from "../../src/speakers/index.js";
import { authenticate, submit, waitFinal } from "../helpers/api.js";
import { assertDocumented } from "../helpers/documented.js";
import { createClient, ROOT, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const K = "ko/deeply_";
// Enrollment: three clips each, from the anechoic room at two microphone distances.
const ENROLL_A = [
  `${K}anechoic_sub100120a00053.wav`,
  `${K}anechoic_sub100121a00071.wav`,
  `${K}anechoic_sub100121a00083.wav`,
];
const ENROLL_B = [
  `${K}anechoic_sub100122a00074.wav`,
  `${K}anechoic_sub100122a00037.wav`,
  `${K}anechoic_sub100121a00068.wav`,
];
// The conversation: other clips of both (one more room among them), and JFK, who is never enrolled.
const CONVERSATION: [string, string][] = [
  ["A", `${K}anechoic_sub100120a00213.wav`],
  ["B", `${K}anechoic_sub100120a00077.wav`],
  ["C", "en/whisper_jfk.flac"],
  ["A", `${K}anechoic_sub100121a00087.wav`],
  ["B", `${K}anechoic_sub100122a00017.wav`],
  ["A", `${K}studioapt_sub100101a00002.wav`],
  ["B", `${K}studioapt_sub100102a00015.wav`],
];

// Decodes each clip with the engine's decoder and lays them end to end, 0.5 s of faint noise (about -60 dBFS, fixed
// seed) before each; prints the reference turns (who, start s, end s) as JSON.
const BUILD = [
  "import sys, json, wave, numpy as np",
  "from sori_engine import audio",
  "rng = np.random.default_rng(1); parts = []; ref = []; t = 0.0",
  "for arg in sys.argv[3:]:",
  "    who, f = arg.split('=', 1)",
  "    parts.append((rng.standard_normal(8000) * 0.001).astype(np.float32)); t += 0.5",
  "    x = audio.decode(sys.argv[2] + '/' + f); parts.append(x); ref.append([who, t, t + len(x) / 16000]); t += len(x) / 16000",
  "x = np.concatenate(parts)",
  "w = wave.open(sys.argv[1], 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)",
  "w.writeframes(np.round(x * 32768).clip(-32768, 32767).astype('<i2').tobytes()); w.close()",
  "print(json.dumps(ref))",
].join("\n");

// The same turns as a two-channel call: channel 0 holds A's turns, channel 1 B's (each silent, with the same faint
// noise, while the other talks); C is left out.
const BUILD_STEREO = BUILD.replace(
  "x = np.concatenate(parts)",
  [
    "x = np.concatenate(parts); y = np.zeros((len(x), 2), np.float32); t0 = 0",
    "for p in parts:",
    "    who = next((r[0] for r in ref if abs(r[1] - t0 / 16000) < 1e-6), None)",
    "    y[t0:t0 + len(p), 1 if who == 'B' else 0] = p",
    "    y[t0:t0 + len(p), 0 if who == 'B' else 1] += (rng.standard_normal(len(p)) * 0.001).astype(np.float32)",
    "    t0 += len(p)",
    "x = y",
  ].join("\n"),
).replace("w.setnchannels(1)", "w.setnchannels(2)");

// The same conversation as a phone line carries it (300-3400 Hz, 8 kHz, G.711 mu-law; back at 16 kHz).
const BUILD_PHONE = BUILD.replace(
  "x = np.concatenate(parts)",
  "x = np.concatenate(parts)\nfrom sori_eval.wav import telephone_channel\nx = telephone_channel(x)",
);

function buildConversation(out: string, kind: "mono" | "stereo" | "phone" = "mono"): [string, number, number][] {
  const stereo = kind === "stereo";
  const turns = stereo ? CONVERSATION.filter(([who]) => who !== "C") : CONVERSATION;
  const script = { mono: BUILD, stereo: BUILD_STEREO, phone: BUILD_PHONE }[kind];
  const r = spawnSync(
    path.join(ROOT, ".venv/bin/python"),
    ["-c", script, out, TESTDATA, ...turns.map(([who, f]) => `${who}=${f}`)],
    { cwd: path.join(ROOT, "engine"), encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`building the conversation failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

interface Utterance {
  start_at: number;
  duration: number;
  msg: string;
  spk: number;
  spk_name?: string;
}

describe("end to end: known speakers", () => {
  let sori: SoriProcess;
  let url: string;
  let dataDir: string;
  let token: string;
  let other: string;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sori-speakers-e2e-"));
  const ids: Record<string, string> = {};

  before(async () => {
    dataDir = tempDataDir();
    const env = { SORI_DATA_DIR: dataDir, SORI_PORT: "0", SORI_WORKERS: "1", SORI_POLL_MS: "200", SORI_SPEAKERS: "1" };
    const c1 = createClient(env);
    const c2 = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c1.client_id, c1.client_secret);
    other = await authenticate(url, c2.client_id, c2.client_secret);
  });
  after(async () => {
    await sori?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  async function enroll(
    tok: string,
    name: string | null,
    files: string[],
    route = "/v1/speakers",
  ): Promise<{ status: number; body: any }> {
    const form = new FormData();
    if (name !== null) form.append("name", name);
    for (const f of files) {
      form.append(
        "file",
        new Blob([fs.readFileSync(path.isAbsolute(f) ? f : path.join(TESTDATA, f))]),
        path.basename(f),
      );
    }
    const r = await fetch(`${url}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${tok}` },
      body: form,
    });
    const body = await r.json();
    assertDocumented(
      `POST ${route.replace(/\/v1\/speakers\/[^/]+\/audio/, "/v1/speakers/{id}/audio")}`,
      r.status,
      body,
    );
    return { status: r.status, body };
  }

  async function call(tok: string, method: string, route: string): Promise<{ status: number; body: any }> {
    const r = await fetch(`${url}${route}`, { method, headers: { authorization: `Bearer ${tok}` } });
    return { status: r.status, body: await r.json() };
  }

  it("enrolls two speakers from clips", async () => {
    for (const [who, name, files] of [
      ["A", "김지은", ENROLL_A],
      ["B", "Park", ENROLL_B],
    ] as const) {
      const r = await enroll(token, name, [...files]);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.name, name);
      assert.ok(r.body.speech_s >= 5 && r.body.speech_s <= 30, JSON.stringify(r.body));
      ids[who] = r.body.id;
    }
    const list = await call(token, "GET", "/v1/speakers");
    assert.equal(list.status, 200);
    assertDocumented("GET /v1/speakers", 200, list.body);
    assert.deepEqual(
      list.body.speakers.map((s: { id: string }) => s.id),
      [ids.A, ids.B],
    );
    // The engine's model is the one the API checks jobs against (a job naming another model's voiceprint is refused).
    assert.equal(list.body.speakers[0].model, VOICEPRINT_MODEL);
    // No audio is kept: the spool holds nothing once the answers are sent.
    const spool = path.join(dataDir, "spool");
    assert.deepEqual(fs.existsSync(spool) ? fs.readdirSync(spool) : [], []);
  });

  /** A conversation of `kind` with the three voices told apart (`spk_count` 3) and every enrolled voice asked for:
   * each reference speaker's utterance time, named right and named wrongly (by the reference speaker who talks most
   * in each utterance). */
  async function nameConversation(t: TestContext, kind: "mono" | "phone") {
    const wav = path.join(tmp, `conversation-${kind}.wav`);
    const ref = buildConversation(wav, kind);
    const r = await submit(url, token, wav, {
      use_diarization: true,
      diarization: { spk_count: 3 },
      speaker_identification: { speakers: [] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const body = await waitFinal(url, token, String(r.body.id), 600_000);
    assert.equal(body.status, "completed", JSON.stringify(body));
    const utterances = body.results.utterances as Utterance[];
    const names: Record<string, string> = { A: "김지은", B: "Park" };
    const time: Record<string, { total: number; named: number; wrong: number }> = {};
    for (const u of utterances) {
      t.diagnostic(
        `[${u.spk} ${u.spk_name ?? "-"}] ${(u.start_at / 1000).toFixed(2)}+${(u.duration / 1000).toFixed(2)} ${u.msg}`,
      );
      let who = "";
      let most = 0;
      for (const [w, a, b] of ref) {
        const ov = Math.min(b * 1000, u.start_at + u.duration) - Math.max(a * 1000, u.start_at);
        if (ov > most) [who, most] = [w, ov];
      }
      if (!who) continue;
      const s = (time[who] ??= { total: 0, named: 0, wrong: 0 });
      s.total += u.duration;
      if (u.spk_name !== undefined && u.spk_name === names[who]) s.named += u.duration;
      else if (u.spk_name !== undefined) s.wrong += u.duration;
    }
    t.diagnostic(JSON.stringify(time));
    return { wav, ref, utterances, time, id: String(r.body.id) };
  }

  it("names the enrolled speakers' utterances in a conversation, and not the third speaker's", async (t: TestContext) => {
    const { wav, ref, utterances, time, id } = await nameConversation(t, "mono");
    for (const who of ["A", "B"]) {
      assert.ok(time[who]!.total > 0);
      assert.ok(time[who]!.named / time[who]!.total >= 0.95, `${who}: ${JSON.stringify(time[who])}`);
    }
    assert.ok(time.C!.total > 0);
    assert.equal(time.C!.named + time.C!.wrong, 0, "the unenrolled speaker has no name");
    // A name belongs to one spk, and the export labels by it.
    const spkOf = new Map(utterances.filter((u) => u.spk_name).map((u) => [u.spk_name, u.spk]));
    for (const u of utterances) if (u.spk_name) assert.equal(spkOf.get(u.spk_name), u.spk);
    const srt = await fetch(`${url}/v1/transcribe/${id}/export?format=srt`, {
      headers: { authorization: `Bearer ${token}` },
    }).then((x) => x.text());
    assert.match(srt, /\[김지은\] /);
    assert.match(srt, /\[Park\] /);
    assert.match(srt, /\[Speaker \d\] /);

    // The OpenAI-compatible route: the same names in verbose_json's segments (the count estimated there).
    const form = new FormData();
    form.append("file", new Blob([fs.readFileSync(wav)]), "conversation.wav");
    form.append("model", "sommers");
    form.append("response_format", "verbose_json");
    form.append("speaker_identification", JSON.stringify({ speakers: [ids.A, ids.B] }));
    const oa = await fetch(`${url}/v1/audio/transcriptions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    const verbose = (await oa.json()) as { segments: { start: number; end: number; spk: number; spk_name?: string }[] };
    assert.equal(oa.status, 200, JSON.stringify(verbose));
    assertDocumented("POST /v1/audio/transcriptions", 200, verbose);
    assert.ok(verbose.segments.every((sg) => Number.isInteger(sg.spk)));
    const named = new Set(verbose.segments.flatMap((sg) => (sg.spk_name ? [sg.spk_name] : [])));
    t.diagnostic(`OpenAI route: ${JSON.stringify(verbose.segments.map((sg) => [sg.start, sg.spk, sg.spk_name]))}`);
    assert.ok(named.size > 0 && [...named].every((n) => n === "김지은" || n === "Park"), [...named].join());
    const [, cStart, cEnd] = ref.find(([w]) => w === "C")!;
    for (const sg of verbose.segments) {
      if (sg.start >= cStart && sg.end <= cEnd) assert.equal(sg.spk_name, undefined, "JFK is not named");
    }
  });

  it("names the enrolled speakers on a phone call from their wideband enrollments, and not the third", async (t) => {
    // The same conversation through a telephone channel: the women were enrolled from studio clips, and a job heard on
    // the phone is compared with their phone prints (docs/speakers.md, "Phone calls").
    // A's speech on the phone scores about 0.5 against her studio print, under the 0.55 threshold, and about 0.8
    // against her phone print: named only through it. B's scores 0.69 against hers, near the phone threshold (0.6), so
    // her speaker may or may not be named; a short turn of hers that diarization gives to A's speaker takes A's name
    // (a speaker's short utterances follow its checked ones), which bounds her wrongly named speech, not to zero.
    const { time } = await nameConversation(t, "phone");
    assert.ok(time.A!.named / time.A!.total >= 0.95, `A: ${JSON.stringify(time.A)}`);
    assert.equal(time.A!.wrong, 0);
    assert.ok(time.B!.wrong <= 0.15 * time.B!.total, `B: ${JSON.stringify(time.B)}`);
    assert.equal(time.C!.named + time.C!.wrong, 0, "the unenrolled speaker has no name");
  });

  it("never names a voice that was not enrolled, even when diarization merges it into an enrolled speaker", async (t) => {
    // All three voices forced into one speaker, and only A asked for: each utterance is checked against its own
    // audio, so B (another woman, same language and room) and JFK stay unnamed (docs/speakers.md, "In jobs").
    const wav = path.join(tmp, "merged.wav");
    const ref = buildConversation(wav);
    const r = await submit(url, token, wav, {
      use_diarization: true,
      diarization: { spk_count: 1 },
      speaker_identification: { speakers: [ids.A] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const body = await waitFinal(url, token, String(r.body.id), 600_000);
    assert.equal(body.status, "completed", JSON.stringify(body));
    const named: Record<string, { total: number; named: number }> = {};
    for (const u of body.results.utterances as Utterance[]) {
      t.diagnostic(
        `[${u.spk} ${u.spk_name ?? "-"}] ${(u.start_at / 1000).toFixed(2)}+${(u.duration / 1000).toFixed(2)}`,
      );
      let who = "";
      let most = 0;
      for (const [w, a, b] of ref) {
        const ov = Math.min(b * 1000, u.start_at + u.duration) - Math.max(a * 1000, u.start_at);
        if (ov > most) [who, most] = [w, ov];
      }
      const s = (named[who] ??= { total: 0, named: 0 });
      s.total += u.duration;
      if (u.spk_name !== undefined) s.named += u.duration;
    }
    t.diagnostic(JSON.stringify(named));
    for (const who of ["B", "C"]) {
      assert.ok(named[who]!.total > 0);
      assert.ok(named[who]!.named <= 0.01 * named[who]!.total, `${who} was never enrolled: ${JSON.stringify(named)}`);
    }
    assert.ok(named.A!.named > 0.5 * named.A!.total, `A keeps her name on her own turns: ${JSON.stringify(named)}`);
  });

  it("names each channel of a two-channel call", async () => {
    const wav = path.join(tmp, "call.wav");
    buildConversation(wav, "stereo");
    const r = await submit(url, token, wav, {
      use_multi_channel: true,
      speaker_identification: { speakers: [ids.A!, ids.B!] },
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const body = await waitFinal(url, token, String(r.body.id), 600_000);
    assert.equal(body.status, "completed", JSON.stringify(body));
    const utterances = body.results.utterances as Utterance[];
    assert.ok(utterances.some((u) => u.spk === 0) && utterances.some((u) => u.spk === 1));
    for (const u of utterances) assert.equal(u.spk_name, u.spk === 0 ? "김지은" : "Park", JSON.stringify(u));
  });

  it("refuses too little speech, several voices, a bad format and a bad name with a clear 400", async () => {
    const short = await enroll(token, "Short", [`${K}anechoic_sub100122a00017.wav`]);
    assert.equal(short.status, 400);
    assert.equal(short.body.code, "H0001");
    assert.match(short.body.msg, /too little speech/);
    const two = await enroll(token, "Two", ["formats/deeply_ko_dialogue_constructed.m4a"]);
    assert.equal(two.status, 400);
    assert.equal(two.body.code, "H0001");
    assert.match(two.body.msg, /several voices/);
    const ogg = await enroll(token, "Ogg", ["formats/picovoice_leopard_test_ko.ogg"]);
    assert.equal(ogg.status, 400);
    assert.equal(ogg.body.code, "H0010");
    for (const name of [null, "", "x".repeat(101), "a\u0007b"]) {
      const r = await enroll(token, name, ENROLL_A.slice(0, 1));
      assert.equal(r.status, 400, `name ${JSON.stringify(name)}`);
      assert.equal(r.body.code, "H0001");
    }
    const none = await enroll(token, "Nobody", []);
    assert.equal(none.status, 400);
    assert.equal(none.body.code, "H0001");
    // Refused enrollments store nothing.
    assert.equal((await call(token, "GET", "/v1/speakers")).body.speakers.length, 2);
  });

  it("accepts one person enrolled from a studio clip and a call", async () => {
    // B in the dance studio and, another clip of hers, through a telephone channel: a phone line moves every raw
    // voiceprint, so the two files are compared centred by their own bands (docs/speakers.md, "One person in a studio
    // and on the phone"). Deleted after, so the jobs above and below see the two speakers only.
    const phone = path.join(tmp, "b-on-the-phone.wav");
    const r0 = spawnSync(
      path.join(ROOT, ".venv/bin/python"),
      [
        "-c",
        "import sys\nfrom sori_engine import audio\nfrom sori_eval.wav import telephone_channel, write_wav\n" +
          "write_wav(sys.argv[2], telephone_channel(audio.decode(sys.argv[1])))",
        path.join(TESTDATA, `${K}anechoic_sub100122a00074.wav`),
        phone,
      ],
      { cwd: path.join(ROOT, "engine"), encoding: "utf8" },
    );
    assert.equal(r0.status, 0, r0.stderr);
    const r = await enroll(token, "Park on the phone", [`${K}dancestudio_sub100112a00065.wav`, phone]);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal((await call(token, "DELETE", `/v1/speakers/${r.body.id}`)).status, 200);
  });

  it("refuses an unknown speaker id, or speaker_identification without speakers to tell apart", async () => {
    const wav = path.join(TESTDATA, ENROLL_A[0]!);
    const unknown = await submit(url, token, wav, {
      use_diarization: true,
      speaker_identification: { speakers: ["nosuchspeaker"] },
    });
    assert.equal(unknown.status, 400);
    assert.match(String(unknown.body.msg), /no speaker with id nosuchspeaker/);
    const alone = await submit(url, token, wav, { speaker_identification: { speakers: [] } });
    assert.equal(alone.status, 400);
    assert.match(String(alone.body.msg), /needs use_diarization or use_multi_channel/);
  });

  it("shows another client nothing: its list is empty, and a speaker id of another client is 404 H0004 or unknown", async () => {
    assert.deepEqual((await call(other, "GET", "/v1/speakers")).body, { speakers: [] });
    const del = await call(other, "DELETE", `/v1/speakers/${ids.A}`);
    assert.equal(del.status, 404);
    assert.equal(del.body.code, "H0004");
    const add = await enroll(other, null, ENROLL_A.slice(0, 1), `/v1/speakers/${ids.A}/audio`);
    assert.equal(add.status, 404);
    assert.equal(add.body.code, "H0004");
    const job = await submit(url, other, path.join(TESTDATA, ENROLL_A[0]!), {
      use_diarization: true,
      speaker_identification: { speakers: [ids.A] },
    });
    assert.equal(job.status, 400);
    assert.match(String(job.body.msg), /no speaker with id/);
  });

  it("adds audio to a speaker, and a delete removes its voiceprint from the store", async () => {
    const added = await enroll(token, null, [`${K}anechoic_sub100120a00213.wav`], `/v1/speakers/${ids.A}/audio`);
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.ok(added.body.speech_s > 15);
    // Another person's speech is not added.
    const wrong = await enroll(token, null, [`${K}anechoic_sub100120a00213.wav`], `/v1/speakers/${ids.B}/audio`);
    assert.equal(wrong.status, 400);
    assert.match(wrong.body.msg, /does not match this speaker's voice/);
    const del = await call(token, "DELETE", `/v1/speakers/${ids.A}`);
    assert.equal(del.status, 200);
    assertDocumented("DELETE /v1/speakers/{id}", 200, del.body);
    assert.deepEqual(del.body, { id: ids.A, deleted: true });
    assert.equal((await call(token, "DELETE", `/v1/speakers/${ids.A}`)).status, 404);
    const db = new Sqlite(path.join(dataDir, "sori.db"), { readonly: true });
    try {
      const rows = db.prepare("SELECT id FROM speakers").all() as { id: string }[];
      assert.deepEqual(
        rows.map((r) => r.id),
        [ids.B],
      );
    } finally {
      db.close();
    }
  });
});
