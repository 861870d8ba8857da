// Answering a request before its body is read (401, 403, 413, 429, a bad part...) without losing the answer. Closing
// the socket at once would make the kernel reset the connection while the client is still sending, and a client that
// writes its whole body before it reads (Python's urllib, many SDKs) then reports a broken pipe instead of the
// answer, and may retry the upload instead of, say, renewing its token. So, as nginx's lingering close does, the rest
// of the body is read and dropped after the answer, within bounds, and only then is the connection closed.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** The most bytes dropped after the answer: enough for a refused upload of ordinary size to be read to its end;
 * beyond it (an upload far over the size limit) the client cannot be spared the reset. */
export const LINGER_BYTES = 64 * 1024 * 1024;
/** Not cut for the byte bound before this (on a fast link the bytes go by before a busy client reads the answer). */
const LINGER_MIN_MS = 250;
/** At most this long after the answer (nginx's lingering_time is 30 s). */
const LINGER_MS = 30_000;
/** Cut when nothing arrived for this long (nginx's lingering_timeout). */
const LINGER_IDLE_MS = 5_000;
const POLL_MS = 50;

const lingering = new WeakSet<IncomingMessage>();

/** Call before the answer is sent, for a request whose body is not read to its end. Once the answer is sent, what is
 * left of the body is read and dropped: to its end (a keep-alive connection then serves the next request) or until a
 * bound is reached (then the connection is cut). Idempotent. */
export function lingeringClose(req: IncomingMessage, res: ServerResponse): void {
  if (lingering.has(req) || req.complete) return;
  lingering.add(req);
  const socket = req.socket;
  const close = halfCloseInstead(socket);
  res.once("finish", () => {
    if (req.complete) return close();
    // Node stops handing the dropped body to the request (its _dump), so progress is read off the socket.
    const answered = Date.now();
    const start = socket.bytesRead;
    let seen = start;
    let seenAt = answered;
    const poll = setInterval(() => {
      const now = Date.now();
      if (socket.bytesRead !== seen) [seen, seenAt] = [socket.bytesRead, now];
      const overBytes = seen - start > LINGER_BYTES && now - answered >= LINGER_MIN_MS;
      if (overBytes || now - seenAt > LINGER_IDLE_MS || now - answered > LINGER_MS) {
        clearInterval(poll);
        socket.destroy();
      }
    }, POLL_MS).unref();
    req.once("end", () => {
      clearInterval(poll);
      close(); // the whole body is read: nothing left for a reset; close now if the answer said so
    });
    socket.once("close", () => clearInterval(poll));
    req.resume();
  });
}

/** Node closes the socket as soon as it has sent an answer that ends the connection (`Connection: close`, which
 * urllib always asks for), unread body or not: that close is replaced, once, by a half-close (no more writes; reading
 * goes on), and the returned function closes it for good once the body is read. */
function halfCloseInstead(socket: Socket): () => void {
  const own = Object.hasOwn(socket, "destroySoon");
  const destroySoon = socket.destroySoon;
  let asked = false;
  socket.destroySoon = function halfClose(this: Socket) {
    asked = true;
    this.end();
  };
  return () => {
    if (own) socket.destroySoon = destroySoon;
    else delete (socket as Partial<Socket>).destroySoon;
    if (asked) socket.destroySoon();
  };
}
