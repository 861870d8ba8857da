// A WAV file names its codec by a 16-bit tag in its `fmt ` chunk. The engine decodes only the WAV codecs of its
// allow-list (engine/sori_engine/media/sandbox.py, ALLOWED_CODECS; docs/audio.md, "Formats"), so any other tag is
// refused at submit (400 H0010, naming the tag) instead of failing the job after it was queued.
import fs from "node:fs";
import { UnsupportedAudio } from "../domain/errors.js";

/** The tags of the engine's WAV allow-list: PCM (integer, any depth the engine takes), IEEE float, A-law, mu-law,
 * MS ADPCM, IMA ADPCM, GSM 6.10 and MP3. (FFmpeg opens a decoder for about 80 tags; the others stay unreachable.) */
const DECODABLE = new Set([0x0001, 0x0002, 0x0003, 0x0006, 0x0007, 0x0011, 0x0031, 0x0055]);
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
