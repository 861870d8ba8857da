// Building blocks for scale-out tests: a fresh database on the machine's PostgreSQL, a local S3-compatible server
// (moto, from the dev extra of engine/pyproject.toml), and `sori serve --no-workers` + `sori worker` as separate
// processes sharing them. Reusable by the multi-host and fault tests.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { freePort } from "./pgCluster.js";
// The PostgreSQL part lives in pgDatabase.ts, so that store tests can use it without loading the AWS SDK.
import { createPgDatabase, type PgDatabase } from "./pgDatabase.js";
import { createClient, ROOT, type SoriProcess, startSori, tempDataDir } from "./server.js";

export { createPgDatabase, PG_ADMIN_URL, type PgDatabase, pgUnavailable } from "./pgDatabase.js";

export interface S3Server {
  endpoint: string;
  bucket: string;
  /** What a sori process needs to use it (SORI_BLOB_STORE=s3 and dummy credentials moto accepts). */
  env: NodeJS.ProcessEnv;
  client: S3Client;
  stop(): Promise<void>;
}

const MOTO = path.join(ROOT, ".venv", "bin", "moto_server");

/** Why moto cannot be started here, or null when it can. */
export function s3Unavailable(): string | null {
  return fs.existsSync(MOTO)
    ? null
    : `no ${MOTO}: install the engine's dev extra (.venv/bin/pip install -e 'engine[dev]')`;
}

/** moto's S3 on a free local port, with one fresh bucket. */
export async function startS3(): Promise<S3Server> {
  const port = await freePort();
  const child: ChildProcess = spawn(MOTO, ["-H", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`moto_server exited: ${stderr}`);
    const ok = await fetch(`${endpoint}/`).then(
      (r) => r.status < 500,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`moto_server did not answer within 30 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const creds = { AWS_ACCESS_KEY_ID: "test", AWS_SECRET_ACCESS_KEY: "test", AWS_REGION: "us-east-1" };
  Object.assign(process.env, creds); // the SDK's default chain, in this process too
  const bucket = `sori-test-${randomBytes(4).toString("hex")}`;
  const client = new S3Client({ endpoint, region: "us-east-1", forcePathStyle: true });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    client,
    env: {
      ...creds,
      SORI_BLOB_STORE: "s3",
      SORI_S3_BUCKET: bucket,
      SORI_S3_ENDPOINT: endpoint,
      SORI_S3_FORCE_PATH_STYLE: "1",
    },
    stop: () =>
      new Promise<void>((resolve) => {
        client.destroy();
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export interface ScaleOut {
  db: PgDatabase;
  api: SoriProcess;
  workers: SoriProcess[];
  /** Environment shared by every process (database, blob store, data dir). */
  env: NodeJS.ProcessEnv;
  client: { client_id: string; client_secret: string };
  /** Starts one more `sori worker` process, with extra environment (e.g. its own SORI_POLL_MS). */
  addWorker(extraEnv?: NodeJS.ProcessEnv): Promise<SoriProcess>;
  stop(): Promise<void>;
}

/** A fresh PostgreSQL database, `sori serve --no-workers` and `workers` `sori worker` processes. Each process gets
 * its own data dir unless the blob store is local (then they share one, as hosts sharing a mount would). */
export async function startScaleOut(
  opts: { env?: NodeJS.ProcessEnv; workerEnv?: NodeJS.ProcessEnv; workers?: number } = {},
): Promise<ScaleOut> {
  const db = await createPgDatabase("sori_scaleout");
  const shared: NodeJS.ProcessEnv = { SORI_DATABASE_URL: db.url, SORI_PORT: "0", ...opts.env };
  const localBlobs = (shared.SORI_BLOB_STORE ?? "local") === "local";
  const sharedDir = tempDataDir();
  const dirs = [sharedDir];
  const dataDir = (): string => {
    if (localBlobs) return sharedDir;
    const d = tempDataDir();
    dirs.push(d);
    return d;
  };
  const procs: SoriProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.all(procs.map((p) => p.stop("SIGKILL")));
    await db.drop();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  };
  try {
    const apiEnv = { ...shared, SORI_DATA_DIR: sharedDir };
    const client = createClient(apiEnv);
    const api = await startSori("serve", apiEnv, ["--no-workers"]);
    procs.push(api);
    const addWorker = async (extraEnv: NodeJS.ProcessEnv = {}): Promise<SoriProcess> => {
      const w = await startSori("worker", { ...shared, SORI_DATA_DIR: dataDir(), ...opts.workerEnv, ...extraEnv });
      procs.push(w);
      return w;
    };
    const workers: SoriProcess[] = [];
    for (let i = 0; i < (opts.workers ?? 1); i++) workers.push(await addWorker());
    return { db, api, workers, env: shared, client, addWorker, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
