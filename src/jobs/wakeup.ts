// Wake-ups across processes on PostgreSQL: the API sends NOTIFY when it queues a job, and every worker process
// LISTENs on a dedicated connection and nudges its workers, so a job on another host starts at once instead of at
// the next poll. Polling (SORI_POLL_MS) stays the fallback: a notification lost while the connection was down
// costs at most one poll interval.
import { sql } from "kysely";
import pg from "pg";
import type { Logger } from "pino";
import { PG_LIVENESS, type Store } from "../storage/db.js";

export const JOBS_CHANNEL = "sori_jobs";
export const LISTENER_NAME = "sori-wakeup";

const MIN_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 30_000;

/** Tells listening worker processes that a job was queued. A no-op on SQLite (one host; in-process nudges do). */
export async function notifyJobQueued(store: Store): Promise<void> {
  if (store.dialect !== "postgres") return;
  await sql`SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(store.db);
}

export interface JobListener {
  close(): Promise<void>;
}

/** LISTENs on its own connection (a pooled one could be handed to another query) and calls onWake on each
 * notification, and once after every (re)connection, since notifications sent while it was away are lost. */
export function listenForJobs(databaseUrl: string, onWake: () => void, log: Logger): JobListener {
  let client: pg.Client | null = null;
  let closed = false;
  let backoff = MIN_BACKOFF_MS;
  let retry: NodeJS.Timeout | null = null;

  const reconnectLater = (why: string): void => {
    if (closed || retry) return;
    log.warn({ reason: why, retry_ms: backoff }, "job notification listener disconnected; polling until it is back");
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, backoff);
    backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
  };

  async function connect(): Promise<void> {
    // Named, so that operators (and the tests) can tell it in pg_stat_activity.
    const c = new pg.Client({ connectionString: databaseUrl, ...PG_LIVENESS, application_name: LISTENER_NAME });
    client = c;
    let dropped = false;
    const drop = (why: string): void => {
      if (dropped) return;
      dropped = true;
      c.removeAllListeners("notification");
      void c.end().catch(() => {});
      reconnectLater(why);
    };
    c.on("error", (err) => drop(err.message)); // never logs the URL: it may hold a password
    c.on("end", () => drop("connection ended"));
    c.on("notification", (msg) => {
      if (msg.channel === JOBS_CHANNEL) onWake();
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${JOBS_CHANNEL}`);
    } catch (err) {
      drop((err as Error).message);
      return;
    }
    if (closed) {
      await c.end().catch(() => {});
      return;
    }
    backoff = MIN_BACKOFF_MS;
    log.debug("listening for job notifications");
    onWake();
  }

  void connect();
  return {
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners("end");
        c.removeAllListeners("error");
        c.on("error", () => {});
        await c.end().catch(() => {});
      }
    },
  };
}
