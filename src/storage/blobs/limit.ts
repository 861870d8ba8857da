// Counts the bytes that go through and fails the stream as soon as there are more than allowed, so that an
// oversized upload is cut off while it streams instead of after it has been stored.
import { Transform } from "node:stream";
import { BlobTooLargeError } from "./keys.js";

export function byteLimit(maxBytes = Infinity): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      t.bytes += chunk.length;
      if (t.bytes > maxBytes) return done(new BlobTooLargeError(maxBytes));
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}
