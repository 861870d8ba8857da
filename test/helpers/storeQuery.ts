// Run by test/e2e/deadLink.test.ts inside a network namespace: opens the job store at the URL given (PostgreSQL,
// through src/storage/db.ts, as `sori` does), prints `ready`, runs `SELECT pg_sleep(<s>)` and prints how it ended
// and after how long, as one JSON line. The test cuts the link meanwhile.
import { sql } from "kysely";
import { openStore } from "../../src/storage/db.js";

const [url, seconds] = process.argv.slice(2);
const store = await openStore({ databaseUrl: url!, dataDir: "/nonexistent" });
console.log(JSON.stringify({ event: "ready" }));
const t0 = Date.now();
try {
  await sql`SELECT pg_sleep(${Number(seconds)})`.execute(store.db);
  console.log(JSON.stringify({ event: "settled", ok: true, ms: Date.now() - t0 }));
} catch (err) {
  console.log(JSON.stringify({ event: "settled", ok: false, ms: Date.now() - t0, err: (err as Error).message }));
}
// The pool may hold a connection that still waits: do not wait for it to close.
process.exit(0);
