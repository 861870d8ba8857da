// Format detection by content and container duration, against the shared real files and a few built ones.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { toApiError } from "../../src/api/errorMapping.js";
import { amrDuration, containerDuration } from "../../src/audio/duration.js";
import { detectFormat, SUPPORTED_FORMATS } from "../../src/audio/format.js";
import { UnsupportedAudio } from "../../src/domain/errors.js";
import { TESTDATA } from "../helpers/server.js";

const FORMATS = path.join(TESTDATA, "formats");
const LEOPARD = (ext: string): string => path.join(FORMATS, `picovoice_leopard_test_ko.${ext}`);
const LEOPARD_S = 3.888; // the clip's length; lossy containers add their encoder padding (up to ~0.07 s here)

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sori-unit-audio-"));
const tmpFile = (name: string, bytes: Buffer | string): string => {
  const p = path.join(tmp, name);
  fs.writeFileSync(p, bytes);
  return p;
};

/** An AMR storage-format file: magic line, then `frames` frames of the given type (payload bytes zero). */
function amrFile(name: string, wide: boolean, frames: number, frameType: number): string {
  const sizes = wide ? [18, 24, 33, 37, 41, 47, 51, 59, 61, 6] : [13, 14, 16, 18, 20, 21, 27, 32, 6];
  const size = sizes[frameType]!;
  const frame = Buffer.alloc(size);
  frame[0] = (frameType << 3) | 0x04; // quality bit set
  return tmpFile(
    name,
    Buffer.concat([
      Buffer.from(wide ? "#!AMR-WB\n" : "#!AMR\n", "latin1"),
      ...Array.from({ length: frames }, () => frame),
    ]),
  );
}

after(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("detectFormat", () => {
  const accepted: [string, string][] = [
    [LEOPARD("44k1_stereo_s24.wav"), "wav"],
    [LEOPARD("ulaw8k.wav"), "wav"],
    [LEOPARD("flac"), "flac"],
    [LEOPARD("mp3"), "mp3"],
    [LEOPARD("m4a"), "m4a"],
    [LEOPARD("mp4"), "mp4"],
    [LEOPARD("amr"), "amr"],
    [LEOPARD("awb"), "amr"], // AMR-WB
    [path.join(FORMATS, "native_pydub_creative_common.mp4"), "mp4"],
    [path.join(FORMATS, "native_pydub_format_test.m4a"), "m4a"],
    [path.join(FORMATS, "native_fasterwhisper_hotwords.mp3"), "mp3"],
  ];
  for (const [file, format] of accepted) {
    it(`${path.basename(file)} → ${format}`, async () => {
      assert.equal(await detectFormat(file), format);
      assert.ok((SUPPORTED_FORMATS as readonly string[]).includes(format));
    });
  }

  it("covers every format of the spec's list", async () => {
    const seen = new Set(await Promise.all(accepted.map(([f]) => detectFormat(f))));
    assert.deepEqual([...seen].sort(), [...SUPPORTED_FORMATS].sort());
  });

  const assertH0010 = async (file: string): Promise<void> => {
    await assert.rejects(detectFormat(file), (e: unknown) => {
      assert.ok(e instanceof UnsupportedAudio, String(e));
      const api = toApiError(e); // what the API answers
      assert.equal(api.code, "H0010");
      assert.equal(api.status, 400);
      assert.match(e.message, /supported: mp4, m4a, mp3, amr, flac, wav/);
      return true;
    });
  };

  const refused = [
    LEOPARD("ogg"),
    LEOPARD("webm"),
    path.join(FORMATS, "common_voice_ja_38852485_16k.ogg"),
    path.join(FORMATS, "native_pydub_test5.webm"),
  ];
  for (const file of refused) it(`${path.basename(file)} → 400 H0010`, () => assertH0010(file));

  it("decides by content, not by the file name", async () => {
    const oggAsMp3 = tmpFile("disguised.mp3", fs.readFileSync(LEOPARD("ogg")));
    await assertH0010(oggAsMp3);
    const flacAsOgg = tmpFile("really-flac.ogg", fs.readFileSync(LEOPARD("flac")));
    assert.equal(await detectFormat(flacAsOgg), "flac");
  });

  it("400 H0010 for random bytes, text, an empty file and a non-audio type", async () => {
    let seed = 12345;
    const random = Buffer.from(
      new Uint8Array(8192).map(() => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) & 0xff),
    );
    await assertH0010(tmpFile("random.wav", random));
    await assertH0010(tmpFile("text.mp3", "definitely not audio, just some text ".repeat(50)));
    await assertH0010(tmpFile("empty.flac", Buffer.alloc(0)));
    // A PNG: recognised content, but not audio.
    const png = Buffer.concat([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"), Buffer.alloc(64)]);
    await assertH0010(tmpFile("image.m4a", png));
  });
});

describe("containerDuration", () => {
  const clip: [string, "wav" | "flac" | "mp3" | "m4a" | "mp4" | "amr"][] = [
    ["44k1_stereo_s24.wav", "wav"],
    ["ulaw8k.wav", "wav"],
    ["flac", "flac"],
    ["mp3", "mp3"],
    ["m4a", "m4a"],
    ["mp4", "mp4"],
    ["amr", "amr"],
    ["awb", "amr"],
  ];
  for (const [ext, format] of clip) {
    it(`picovoice_leopard_test_ko.${ext} ≈ ${LEOPARD_S} s`, async () => {
      const d = await containerDuration(LEOPARD(ext), format);
      assert.ok(d !== null, "duration known");
      assert.ok(Math.abs(d - LEOPARD_S) < 0.1, `${d} s`);
    });
  }

  it("is exact for the lossless files", async () => {
    assert.ok(Math.abs((await containerDuration(LEOPARD("flac"), "flac"))! - LEOPARD_S) < 0.001);
    assert.ok(Math.abs((await containerDuration(LEOPARD("ulaw8k.wav"), "wav"))! - LEOPARD_S) < 0.001);
  });

  it("reads the longer shared files too", async () => {
    for (const [name, format, seconds] of [
      ["common_voice_ja_38852485_16k.amr", "amr", 10.02],
      ["common_voice_ja_38852485_16k.mp3", "mp3", 10.08],
      ["deeply_ko_dialogue_constructed.m4a", "m4a", 69.4],
      ["deeply_ko_dialogue_constructed.amr", "amr", 69.36],
    ] as const) {
      const d = await containerDuration(path.join(FORMATS, name), format);
      assert.ok(d !== null && Math.abs(d - seconds) < 0.1, `${name}: ${d}`);
    }
  });

  it("null (not an exception) for content it cannot read", async () => {
    const junk = tmpFile("junk.bin", "not audio at all ".repeat(100));
    assert.equal(await containerDuration(junk, "amr"), null);
    assert.equal(await containerDuration(path.join(tmp, "missing.mp3"), "mp3"), null);
    assert.equal(await containerDuration(path.join(tmp, "missing.amr"), "amr"), null);
  });
});

describe("amrDuration", () => {
  it("counts 20 ms frames of AMR-NB and AMR-WB", async () => {
    assert.equal(await amrDuration(amrFile("nb.amr", false, 50, 7)), 1);
    assert.equal(await amrDuration(amrFile("wb.awb", true, 150, 8)), 3);
    assert.equal(await amrDuration(amrFile("wb0.awb", true, 0, 8)), 0);
  });

  it("follows frames across read-chunk boundaries (64 KiB)", async () => {
    // 32-byte frames after a 6-byte magic: frame edges never line up with the 64 KiB chunks.
    assert.equal(await amrDuration(amrFile("long.amr", false, 10_000, 7)), 200);
    // Mixed sizes (SID frames of 6 bytes between speech frames of 61).
    const speech = Buffer.alloc(61);
    speech[0] = (8 << 3) | 0x04;
    const sid = Buffer.alloc(6);
    sid[0] = (9 << 3) | 0x04;
    const parts = [Buffer.from("#!AMR-WB\n", "latin1")];
    for (let i = 0; i < 3000; i++) parts.push(speech, sid);
    assert.equal(await amrDuration(tmpFile("mixed.awb", Buffer.concat(parts))), 6000 * 0.02);
  });

  it("null for a file without the AMR magic or with a reserved frame type", async () => {
    assert.equal(await amrDuration(LEOPARD("mp3")), null);
    const bad = Buffer.concat([Buffer.from("#!AMR\n", "latin1"), Buffer.from([(10 << 3) | 0x04]), Buffer.alloc(40)]);
    assert.equal(await amrDuration(tmpFile("reserved.amr", bad)), null);
  });

  it("agrees with the real AMR files' frame count", async () => {
    assert.equal(await amrDuration(LEOPARD("amr")), 3.9);
    assert.equal(await amrDuration(LEOPARD("awb")), 3.9);
  });
});
