// Opens the job store: an embedded SQLite file by default, PostgreSQL when a URL is configured.
// Both run the same Kysely queries; `dialect` lets the few engine-specific statements choose their form.
import fs from "node:fs";
import path from "node:path";
import Sqlite from "better-sqlite3";
import { Kysely, type Migration, Migrator, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import * as m001 from "./migrations/001_initial.js";
import * as m002 from "./migrations/002_refinement.js";
import * as m003 from "./migrations/003_extras.js";
import * as m004 from "./migrations/004_blobs.js";
import * as m005 from "./migrations/005_tasks.js";
import * as m006 from "./migrations/006_rate_limits.js";
import * as m007 from "./migrations/007_checkpoints.js";
import * as m008 from "./migrations/008_streams.js";
import * as m009 from "./migrations/009_speakers.js";
import * as m010 from "./migrations/010_redacted_audio.js";
import * as m011 from "./migrations/011_speaker_phone_prints.js";
import type { Database } from "./schema.js";

export type Dialect = "sqlite" | "postgres";

export interface Store {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

// Numbered migrations, applied in order; a new one is a new file here, never an edit of an old one.
const MIGRATIONS = {
  "001_initial": m001,
  "002_refinement": m002,
  "003_extras": m003,
  "004_blobs": m004,
  "005_tasks": m005,
  "006_rate_limits": m006,
  "007_checkpoints": m007,
  "008_streams": m008,
  "009_speakers": m009,
  "010_redacted_audio": m010,
  "011_speaker_phone_prints": m011,
};

// PostgreSQL returns int8 as strings to avoid precision loss; our int8 values are epoch ms and sequence numbers,
// well inside JavaScript's safe integer range.
pg.types.setTypeParser(20, (v) => Number(v));

/**
 * How every PostgreSQL connection notices a dead peer. When the server's end of a connection is gone while the client
 * waits for an answer (the store's host restarted or failed over while the link was cut, or a partition outlasted the
 * server's retransmissions), no reset arrives, and without keepalive the query waits forever: a worker stuck so in a
 * checkpoint write kept renewing its lease on other connections, and its job never ended (test/e2e/deadLink.test.ts).
 * Node probes an idle connection after `keepAliveInitialDelayMillis`, then every second, ten times: such a query
 * fails in about 20 s. A connection attempt that gets no answer (frames dropped) gives up after
 * `connectionTimeoutMillis` rather than the kernel's two minutes of SYN retries, so a process is back at work
 * within seconds of its link returning.
 */
export const PG_LIVENESS = {
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000,
  connectionTimeoutMillis: 10_000,
} as const;

export async function openStore(opts: { databaseUrl?: string | undefined; dataDir: string }): Promise<Store> {
  let db: Kysely<Database>;
  let dialect: Dialect;
  if (opts.databaseUrl) {
    dialect = "postgres";
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10, ...PG_LIVENESS });
    // An idle client losing its connection (server restart) must not crash the process; the pool replaces it.
    pool.on("error", () => {});
    // A client in use whose socket fails (a reset, or the keepalive giving up) fails its query and then emits
    // 'error', which the pool listens for only while the client is idle: unheard, it would crash the process. The
    // query's rejection carries the error, and the pool drops the broken client when it is released.
    pool.on("connect", (client) => client.on("error", () => {}));
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  } else {
    dialect = "sqlite";
    // Transcripts and secret hashes live here: only the service's user may read them.
    fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    const dbPath = path.join(opts.dataDir, "sori.db");
    fs.closeSync(fs.openSync(dbPath, "a", 0o600));
    const file = new Sqlite(dbPath);
    file.pragma("journal_mode = WAL");
    file.pragma("busy_timeout = 10000");
    file.pragma("foreign_keys = ON");
    file.pragma("synchronous = NORMAL");
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }) });
  }
  await migrate(db, dialect);
  return { db, dialect, close: () => db.destroy() };
}

async function migrate(db: Kysely<Database>, dialect: Dialect): Promise<void> {
  const migrations: Record<string, Migration> = {};
  for (const [name, mod] of Object.entries(MIGRATIONS)) {
    migrations[name] = { up: (k) => mod.up(k, dialect) };
  }
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
