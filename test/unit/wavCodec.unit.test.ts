// The WAV codec tag read at submit (src/audio/wavCodec.ts): a WAV the engine cannot decode is refused with H0010.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { toApiError } from "../../src/api/errorMapping.js";
import { checkWavCodec, wavCodecTag } from "../../src/audio/wavCodec.js";
import { UnsupportedAudio } from "../../src/domain/errors.js";

const u16 = (n: number): Buffer => Buffer.from([n & 0xff, n >> 8]);
const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const chunk = (id: string, body: Buffer): Buffer =>
  Buffer.concat([
    Buffer.from(id, "latin1"),
    u32(body.length),
    body,
    body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0),
  ]);

/** A RIFF/WAVE header with `tag` in its fmt chunk, optionally after another chunk; EXTENSIBLE carries `sub`. */
function wav(tag: number, opts: { before?: Buffer; sub?: number } = {}): Buffer {
  let fmt = Buffer.concat([u16(tag), u16(1), u32(16000), u32(32000), u16(2), u16(16)]);
  if (opts.sub !== undefined) fmt = Buffer.concat([fmt, u16(22), u16(16), u32(4), u16(opts.sub), Buffer.alloc(14)]);
  const body = Buffer.concat([
    Buffer.from("WAVE"),
    opts.before ?? Buffer.alloc(0),
    chunk("fmt ", fmt),
    chunk("data", Buffer.alloc(64)),
  ]);
  return Buffer.concat([Buffer.from("RIFF"), u32(body.length), body]);
}

describe("wavCodecTag", () => {
  it("reads the fmt chunk's tag, after other chunks (odd sizes padded)", () => {
    assert.equal(wavCodecTag(wav(0x0001)), 0x0001);
    assert.equal(wavCodecTag(wav(0x1234, { before: chunk("LIST", Buffer.from("abc")) })), 0x1234);
  });
  it("reads WAVE_FORMAT_EXTENSIBLE's sub-format", () => {
    assert.equal(wavCodecTag(wav(0xfffe, { sub: 0x0003 })), 0x0003);
    assert.equal(wavCodecTag(wav(0xfffe, { sub: 0x4321 })), 0x4321);
  });
  it("null for what is not a readable WAV header", () => {
    assert.equal(wavCodecTag(Buffer.from("RIFF")), null);
    assert.equal(wavCodecTag(Buffer.from("ID3\x04 not a wav at all")), null);
    assert.equal(wavCodecTag(wav(1).subarray(0, 20)), null);
  });
});

describe("checkWavCodec", () => {
  const file = (b: Buffer): string => {
    const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sori-wavcodec-")), "a.wav");
    fs.writeFileSync(f, b);
    return f;
  };
  it("passes PCM, float, A-law, mu-law, ADPCM and extensible PCM", async () => {
    for (const b of [wav(0x0001), wav(0x0003), wav(0x0006), wav(0x0007), wav(0x0011), wav(0xfffe, { sub: 1 })])
      await checkWavCodec(file(b));
    for (const tag of [0x0002, 0x0031, 0x0055]) await checkWavCodec(file(wav(tag))); // MS ADPCM, GSM 6.10, MP3
  });
  it("refuses a codec FFmpeg decodes but the engine's allow-list does not (G.722, G.726, Yamaha ADPCM)", async () => {
    for (const tag of [0x028f, 0x0045, 0x0020])
      await assert.rejects(
        checkWavCodec(file(wav(tag))),
        (e: unknown) => e instanceof UnsupportedAudio && toApiError(e).code === "H0010",
      );
  });
  it("refuses a tag the engine has no decoder for: 400 H0010 naming the tag", async () => {
    await assert.rejects(
      checkWavCodec(file(wav(0x1234))),
      (e: unknown) => e instanceof UnsupportedAudio && toApiError(e).code === "H0010" && /0x1234/.test(e.message),
    );
    await assert.rejects(
      checkWavCodec(file(wav(0xfffe, { sub: 0x4321 }))),
      (e: unknown) => e instanceof UnsupportedAudio && toApiError(e).code === "H0010",
    );
  });
});
