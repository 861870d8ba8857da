// A WAV file names its codec by a 16-bit tag in its `fmt ` chunk, and the engine's FFmpeg has no decoder for many
// of the tags a RIFF file can carry. Such a file used to pass submit and crash the engine; it is refused at submit
// instead (400 H0010), naming the tag.
import fs from "node:fs";
import { UnsupportedAudio } from "../domain/errors.js";

/** The tags the engine's FFmpeg build (PyAV) opens a decoder for: each tag 0x0000-0x2fff and the known high ones
 * was written into a WAV header and probed (2026-11); 0x0003 (IEEE float) needs 32 or 64 bits, which a header
 * with a wrong bit depth still names. */
const DECODABLE = new Set([
  0x0001, 0x0002, 0x0003, 0x0006, 0x0007, 0x000a, 0x0010, 0x0011, 0x0014, 0x0017, 0x0020, 0x0022, 0x0031, 0x0032,
  0x0038, 0x0040, 0x0041, 0x0042, 0x0044, 0x0045, 0x0049, 0x0050, 0x0055, 0x0057, 0x0058, 0x0061, 0x0062, 0x0064,
  0x0065, 0x0069, 0x0070, 0x0075, 0x0077, 0x0078, 0x0083, 0x00ff, 0x0111, 0x0125, 0x0130, 0x0135, 0x0141, 0x0142,
  0x0143, 0x0145, 0x0146, 0x0160, 0x0161, 0x0162, 0x0163, 0x0166, 0x0180, 0x0200, 0x0215, 0x0216, 0x0250, 0x0270,
  0x028e, 0x028f, 0x0350, 0x0370, 0x0401, 0x0402, 0x0500, 0x0501, 0x1500, 0x1501, 0x1600, 0x1602, 0x1610, 0x2000,
  0x2001, 0x2222, 0x4143, 0x5346, 0x6c75, 0x706d, 0xa100, 0xa106, 0xa109,
]);
const EXTENSIBLE = 0xfffe;

/** The codec tag of a RIFF/WAVE header (for WAVE_FORMAT_EXTENSIBLE, its sub-format's), or null when the header has
 * no readable `fmt ` chunk in the bytes given. */
export function wavCodecTag(head: Buffer): number | null {
  if (head.length < 12 || head.toString("latin1", 0, 4) !== "RIFF" || head.toString("latin1", 8, 12) !== "WAVE")
    return null;
  let at = 12;
  while (at + 8 <= head.length) {
    const id = head.toString("latin1", at, at + 4);
    const size = head.readUInt32LE(at + 4);
    if (id === "fmt ") {
      if (at + 8 + 2 > head.length) return null;
      const tag = head.readUInt16LE(at + 8);
      if (tag === EXTENSIBLE && size >= 26 && at + 8 + 26 <= head.length) return head.readUInt16LE(at + 8 + 24);
      return tag;
    }
    at += 8 + size + (size % 2); // chunks are padded to an even size
  }
  return null;
}

/** UnsupportedAudio (400 H0010) for a WAV whose codec the engine cannot decode. Headers that cannot be read are left to the engine,
 * which fails such a job H0010 itself. */
export async function checkWavCodec(file: string): Promise<void> {
  const handle = await fs.promises.open(file, "r");
  let head: Buffer;
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    head = buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const tag = wavCodecTag(head);
  if (tag !== null && !DECODABLE.has(tag)) {
    throw new UnsupportedAudio(`unsupported WAV codec (format tag 0x${tag.toString(16).padStart(4, "0")})`);
  }
}
