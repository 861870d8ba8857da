// POST /v1/audio/transcriptions through the official `openai` SDK, pointed at sori by baseURL, with a token from
// /v1/authenticate as the API key: real speech, every response_format, word and segment timestamps, errors.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import OpenAI, { toFile } from "openai";
import type { TranscriptionVerbose } from "openai/resources/audio/transcriptions";
import { authenticate, read } from "../helpers/api.js";
import { assertResembles, normalizedCer } from "../helpers/cer.js";
import { assertDocumented } from "../helpers/documented.js";
import { createClient, type SoriProcess, startSori, TESTDATA, tempDataDir } from "../helpers/server.js";

const JFK = path.join(TESTDATA, "en/whisper_jfk.flac"); // 11 s
const KO = path.join(TESTDATA, "ko/picovoice_leopard_test_ko.wav");
const LONG = path.join(TESTDATA, "multi/pyannote_dev00.wav"); // 60 s, 1.9 MB
const BIG = path.join(TESTDATA, "en/earnings22_1_4482311_3_62.wav"); // 2.9 MB
const JFK_TEXT =
  "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.";

describe("OpenAI-compatible transcription with the openai SDK", () => {
  let sori: SoriProcess;
  let openai: OpenAI;
  let url: string;
  let token: string;

  before(async () => {
    const env = {
      SORI_DATA_DIR: tempDataDir(),
      SORI_PORT: "0",
      SORI_WORKERS: "1",
      SORI_POLL_MS: "200",
      SORI_OPENAI_MAX_AUDIO_S: "30",
      SORI_OPENAI_MAX_FILE_BYTES: String(2 * 1024 * 1024),
    };
    const c = createClient(env);
    sori = await startSori("serve", env);
    url = sori.url;
    token = await authenticate(url, c.client_id, c.client_secret);
    openai = new OpenAI({ apiKey: token, baseURL: `${url}/v1`, maxRetries: 0 });
  });
  after(() => sori.stop());

  it("json: the text, and the job is an ordinary sori job", async () => {
    const { data, response } = await openai.audio.transcriptions
      .create({ file: fs.createReadStream(JFK), model: "whisper-1" })
      .withResponse();
    assertDocumented("POST /v1/audio/transcriptions", response.status, { ...data });
    assert.ok(normalizedCer(data.text, JFK_TEXT) < 0.15, data.text);
    assert.deepEqual((data as { usage?: unknown }).usage, { type: "duration", seconds: 11 });
    const id = response.headers.get("x-sori-job-id")!;
    const job = await read(url, token, id);
    assert.equal(job.body.status, "completed");
    assert.equal(job.body.results.utterances.map((u: { msg: string }) => u.msg).join(" "), data.text);
  });

  it("verbose_json with word and segment timestamps, as the OpenAPI document describes it", async () => {
    const raw = await openai.audio.transcriptions
      .create({
        file: fs.createReadStream(JFK),
        model: "whisper-1",
        language: "en",
        response_format: "verbose_json",
        timestamp_granularities: ["word", "segment"],
        temperature: 0,
      })
      .asResponse();
    const r = (await raw.json()) as TranscriptionVerbose;
    assertDocumented("POST /v1/audio/transcriptions", raw.status, r);
    assert.equal(r.language, "english");
    assert.ok(Math.abs(r.duration - 11) < 0.5);
    assert.ok(r.segments && r.segments.length > 0);
    assert.ok(r.words && r.words.length >= 15, `words: ${r.words?.length}`);
    let prev = 0;
    for (const w of r.words) {
      assert.ok(w.start >= prev && w.end >= w.start && w.end <= 11.5, JSON.stringify(w));
      prev = w.start;
    }
    for (const s of r.segments) assert.ok(s.end > s.start && s.text.length > 0);
    assert.equal(r.segments.map((s) => s.text).join(" "), r.text);
    assertResembles(r.words.map((w) => w.word).join(" "), JFK_TEXT, 0.15, "words");
  });

  it("verbose_json without granularities has segments and no words", async () => {
    const r = await openai.audio.transcriptions.create({
      file: fs.createReadStream(KO),
      model: "whisper-1",
      language: "ko",
      response_format: "verbose_json",
    });
    assert.equal(r.language, "korean");
    assert.ok(r.segments!.length > 0);
    assert.equal(r.words, undefined);
  });

  it("text, srt and vtt come back as text", async () => {
    const text = await openai.audio.transcriptions.create({
      file: fs.createReadStream(JFK),
      model: "whisper-1",
      response_format: "text",
    });
    assert.equal(typeof text, "string");
    assert.ok(normalizedCer(text, JFK_TEXT) < 0.15, text);
    const srt = await openai.audio.transcriptions.create({
      file: fs.createReadStream(JFK),
      model: "whisper-1",
      response_format: "srt",
    });
    assert.match(srt, /^1\n00:00:\d{2},\d{3} --> 00:00:\d{2},\d{3}\n/);
    const vtt = await openai.audio.transcriptions
      .create({
        file: await toFile(fs.readFileSync(JFK), "jfk.flac"),
        model: "sommers",
        response_format: "vtt",
        language: "en",
      })
      .catch((e: Error) => e);
    // sommers is the spec's Korean/Japanese model: English is refused, in OpenAI's error shape.
    assert.ok(vtt instanceof OpenAI.BadRequestError);
    assert.equal(vtt.code, "H0001");
    const vtt2 = await openai.audio.transcriptions.create({
      file: await toFile(fs.readFileSync(JFK), "jfk.flac"),
      model: "whisper",
      response_format: "vtt",
    });
    assert.ok(vtt2.startsWith("WEBVTT\n\n00:00:"), vtt2);
  });

  it("errors use OpenAI's shape with sori's code", async () => {
    const bad = await openai.audio.transcriptions
      .create({ file: fs.createReadStream(JFK), model: "dall-e-3" })
      .catch((e: unknown) => e);
    assert.ok(bad instanceof OpenAI.BadRequestError, String(bad));
    assert.equal(bad.code, "H0001");
    assert.equal(bad.type, "invalid_request_error");
    assert.match(bad.message, /model must be one of/);

    const noAuth = new OpenAI({ apiKey: "not-a-token", baseURL: `${url}/v1`, maxRetries: 0 });
    const unauth = await noAuth.audio.transcriptions
      .create({ file: fs.createReadStream(JFK), model: "whisper-1" })
      .catch((e: unknown) => e);
    assert.ok(unauth instanceof OpenAI.AuthenticationError, String(unauth));
    assert.equal(unauth.code, "H0002");

    const long = await openai.audio.transcriptions
      .create({ file: fs.createReadStream(LONG), model: "whisper-1" })
      .catch((e: unknown) => e);
    assert.ok(long instanceof OpenAI.APIError && long.status === 413, String(long));
    assert.equal(long.code, "H0006");
    assert.match(long.message, /POST \/v1\/transcribe/);

    const big = await openai.audio.transcriptions
      .create({ file: fs.createReadStream(BIG), model: "whisper-1" })
      .catch((e: unknown) => e);
    assert.ok(big instanceof OpenAI.APIError && big.status === 413, String(big));
    assert.equal(big.code, "H0005");

    const notAudio = await openai.audio.transcriptions
      .create({ file: await toFile(Buffer.from("hello, not audio"), "a.txt"), model: "whisper-1" })
      .catch((e: unknown) => e);
    assert.ok(notAudio instanceof OpenAI.BadRequestError);
    assert.equal(notAudio.code, "H0010");

    const granular = await openai.audio.transcriptions
      .create({
        file: fs.createReadStream(JFK),
        model: "whisper-1",
        response_format: "json",
        timestamp_granularities: ["word"],
      })
      .catch((e: unknown) => e);
    assert.ok(granular instanceof OpenAI.BadRequestError);
    assert.match(granular.message, /verbose_json/);
  });
});
