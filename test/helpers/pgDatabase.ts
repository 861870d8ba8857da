// A fresh database on the machine's PostgreSQL (SORI_TEST_PG_URL, an admin connection), for every test that runs on
// PostgreSQL: the store tests, the scale-out and fault tests (through scaleout.ts), observability and tenancy.
import { randomBytes } from "node:crypto";
import pg from "pg";

export const PG_ADMIN_URL = process.env.SORI_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Why the shared PostgreSQL cannot be used, or null when it can. */
export async function pgUnavailable(): Promise<string | null> {
  return admin((c) => c.query("SELECT 1")).then(
    () => null,
    (e: Error) => `PostgreSQL unreachable at ${PG_ADMIN_URL} (${e.message}); set SORI_TEST_PG_URL or start it`,
  );
}

export interface PgDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, uniquely named database; drop() removes it (closing whatever is still connected). */
export async function createPgDatabase(prefix = "sori_test"): Promise<PgDatabase> {
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
