// Audio duration from the container, read at submit to enforce the length limit (413 H0006) before queueing.
// null means "the container does not say": the engine then enforces the limit while decoding.
import fs from "node:fs";
import { parseFile } from "music-metadata";
import type { AudioFormat } from "./format.js";

export async function containerDuration(file: string, format: AudioFormat): Promise<number | null> {
  try {
    if (format === "amr") return await amrDuration(file);
    const meta = await parseFile(file, { duration: true, skipCovers: true });
    const d = meta.format.duration;
    return typeof d === "number" && Number.isFinite(d) && d >= 0 ? d : null;
  } catch {
    return null;
  }
}

// AMR storage format (RFC 4867 section 5): a magic line, then frames of 20 ms each; a frame's size follows from
// the frame type in its one-byte header. music-metadata does not read AMR, and the format is simple enough to walk.
const AMR_NB_MAGIC = "#!AMR\n";
const AMR_WB_MAGIC = "#!AMR-WB\n";
const NB_FRAME_BYTES = [13, 14, 16, 18, 20, 21, 27, 32, 6, 0, 0, 0, 0, 0, 0, 1];
const WB_FRAME_BYTES = [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 0, 0, 0, 0, 1, 1];

export async function amrDuration(file: string): Promise<number | null> {
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 16 });
  let sizes: number[] | null = null;
  let frames = 0;
  let skip = 0; // bytes of the current frame still to pass over
  let head = Buffer.alloc(0);
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let buf = chunk;
    if (!sizes) {
      head = Buffer.concat([head, buf]);
      if (head.length < AMR_WB_MAGIC.length) continue;
      const text = head.subarray(0, AMR_WB_MAGIC.length).toString("latin1");
      if (text.startsWith(AMR_WB_MAGIC)) [sizes, buf] = [WB_FRAME_BYTES, head.subarray(AMR_WB_MAGIC.length)];
      else if (text.startsWith(AMR_NB_MAGIC)) [sizes, buf] = [NB_FRAME_BYTES, head.subarray(AMR_NB_MAGIC.length)];
      else return null;
    }
    let i = Math.min(skip, buf.length);
    skip -= i;
    while (i < buf.length) {
      const size = sizes[(buf[i]! >> 3) & 0x0f]!;
      if (size === 0) return null; // reserved frame type: not a valid AMR stream
      frames += 1;
      const end = i + size;
      if (end > buf.length) skip = end - buf.length;
      i = end;
    }
  }
  return sizes ? frames * 0.02 : null;
}
