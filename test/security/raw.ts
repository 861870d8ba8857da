// Raw HTTP for the abuse tests: bytes and headers exactly as chosen (fetch would fix up a malformed body or type).
import http from "node:http";

/** A POST whose raw bytes and headers we choose (fetch would fix up a malformed content type). Rejects when no
 * answer comes within `timeoutMs`: a hang is a failure. Header values the client library itself refuses to send
 * are replaced by a plain multipart type, since they could never reach the server either. */
export function rawPost(
  url: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const safe = Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, /^[\t\x20-\x7e\x80-\xff]*$/.test(v) ? v : "multipart/form-data"]),
  );
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", headers: { ...safe, "content-length": body.length } }, (res) => {
      let text = "";
      res
        .setEncoding("utf8")
        .on("data", (d) => (text += d))
        .on("end", () => {
          clearTimeout(t);
          resolve({ status: res.statusCode ?? 0, text });
        });
    });
    const t = setTimeout(() => {
      req.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    req.on("error", (err) => {
      clearTimeout(t);
      reject(err);
    });
    req.end(body);
  });
}
