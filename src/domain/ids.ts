// Random ids in base64url. An id a user may type on a command line (a client id, a job or speaker id) never begins
// with `-`, which a command line would read as an option (`sori clients update -x3…`): such a draw is drawn again,
// which leaves 63 of 64 first characters and the rest uniform. Ids made before this rule keep working everywhere;
// on a command line they follow `--` (`sori clients update -- -x3…`).
import { randomBytes } from "node:crypto";

export function newId(bytes: number): string {
  for (;;) {
    const id = randomBytes(bytes).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}
