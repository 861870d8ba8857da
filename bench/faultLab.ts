// The fault harness's deployment: two API hosts and W worker hosts, each its own network namespace on a lab bridge
// (test/helpers/netns.ts, as test/e2e/multihost.test.ts), and a private PostgreSQL cluster listening on the bridge,
// so every process reaches the store over its own link, which the harness can cut. Audio blobs are on a shared
// directory. Each process is started with its own application_name (`sori-<host>.<generation>`), which the fence
// audit (fenceAudit.ts) records with every write.
import { spawnSync } from "node:child_process";
import pg from "pg";
import {
  createNetLab,
  cutLink,
  forgetConnections,
  type LinkCut,
  type NetLab,
  restoreLink,
} from "../test/helpers/netns.js";
import { type PgCluster, startPgCluster } from "../test/helpers/pgCluster.js";
import { type SoriProcess, startSori } from "../test/helpers/server.js";
import { installFenceAudit } from "./fenceAudit.js";

const API_PORT = 8000; // each API host has its own namespace, so the same port on each

export interface FaultLab {
  cluster: PgCluster;
  /** URL of the harness's database from the root namespace (the checker's own reads). */
  adminUrl: string;
  /** The API hosts' base URLs, in host order. */
  apiUrls: string[];
  apis: (SoriProcess | null)[];
  workers: (SoriProcess | null)[];
  /** Every process ever started, for the logs and the CPU figures. */
  all: SoriProcess[];
  /** Every process ever started, by its name (`<host>.<generation>`). */
  named(): [string, SoriProcess][];
  /** The process id behind an application_name (fence audit). */
  pidOf(app: string): number | undefined;
  startApi(i: number): Promise<void>;
  startWorker(i: number): Promise<void>;
  /** SIGTERM (a drain); waits for the exit. */
  stop(p: SoriProcess): Promise<void>;
  /** kill -9 of the process and its engine. */
  kill(p: SoriProcess): Promise<void>;
  /** Cuts the host's link until restore(host); false if it was already cut. */
  cut(host: string, how: LinkCut): boolean;
  restore(host: string): void;
  isCut(host: string): boolean;
  /** The store's host forgets the host's connections (failover, reboot): killed on the server's side only. */
  forget(host: string): number;
  /** Processes that exited although the harness neither killed nor stopped them (a crash). */
  crashed(): string[];
  /** Worker indexes that run a task now, the one with the longest audio first. */
  busyWorkers(): Promise<number[]>;
  destroy(): Promise<void>;
}

export async function startFaultLab(opts: {
  workers: number;
  dbName: string;
  env: NodeJS.ProcessEnv;
  dataDir: string;
}): Promise<FaultLab> {
  const apiHosts = ["api0", "api1"];
  const workerHosts = Array.from({ length: opts.workers }, (_, i) => `w${i}`);
  const lab: NetLab = createNetLab([...apiHosts, ...workerHosts]);
  let cluster: PgCluster;
  try {
    cluster = await startPgCluster({ listen: [lab.hostAddr] });
  } catch (e) {
    lab.destroy();
    throw e;
  }
  const db = await cluster.createDatabase(opts.dbName);
  const generation = new Map<string, number>();
  const pids = new Map<string, number>();
  const byName: [string, SoriProcess][] = [];
  const cuts = new Map<string, LinkCut>();
  const all: SoriProcess[] = [];
  const apis: (SoriProcess | null)[] = apiHosts.map(() => null);
  const workers: (SoriProcess | null)[] = workerHosts.map(() => null);
  let audited = false;

  const start = async (host: string, command: "serve" | "worker", extra: NodeJS.ProcessEnv, args: string[]) => {
    const gen = (generation.get(host) ?? 0) + 1;
    generation.set(host, gen);
    const app = `sori-${host}.${gen}`;
    const p = await startSori(
      command,
      {
        ...opts.env,
        SORI_DATA_DIR: opts.dataDir,
        SORI_DATABASE_URL: `${cluster.url(db, lab.hostAddr)}?application_name=${app}`,
        ...extra,
      },
      args,
      { netns: lab.hosts[host]!.ns },
    );
    pids.set(app, p.child.pid!);
    byName.push([`${host}.${gen}`, p]);
    all.push(p);
    return p;
  };
  const stopped = new Set<SoriProcess>();
  const kill = (p: SoriProcess): Promise<void> => {
    stopped.add(p);
    spawnSync("pkill", ["-KILL", "-P", String(p.child.pid)]);
    return p.stop("SIGKILL");
  };
  const adminUrl = cluster.url(db);
  const restore = (host: string): void => {
    const how = cuts.get(host);
    if (!how) return;
    restoreLink(lab.hosts[host]!, how);
    cuts.delete(host);
  };

  return {
    cluster,
    adminUrl,
    apiUrls: apiHosts.map((h) => `http://${lab.hosts[h]!.addr}:${API_PORT}`),
    apis,
    workers,
    all,
    named: () => byName,
    pidOf: (app) => pids.get(app),
    async startApi(i) {
      const host = apiHosts[i]!;
      apis[i] = await start(host, "serve", { SORI_HOST: lab.hosts[host]!.addr, SORI_PORT: String(API_PORT) }, [
        "--no-workers",
      ]);
      if (!audited) {
        // The first API start ran the migrations: the audit's triggers can go on the tables now.
        audited = true;
        const c = new pg.Client({ connectionString: adminUrl });
        await c.connect();
        await installFenceAudit(c).finally(() => c.end());
      }
    },
    async startWorker(i) {
      workers[i] = await start(workerHosts[i]!, "worker", {}, []);
    },
    kill,
    cut(host, how) {
      if (cuts.has(host)) return false;
      cutLink(lab.hosts[host]!, how);
      cuts.set(host, how);
      return true;
    },
    restore,
    isCut: (host) => cuts.has(host),
    forget: (host) => forgetConnections(lab.hosts[host]!, cluster.port),
    crashed: () =>
      byName
        .filter(([, p]) => !stopped.has(p) && (p.child.exitCode !== null || p.child.signalCode !== null))
        .map(([name, p]) => `${name} (${p.child.exitCode ?? p.child.signalCode})`),
    stop(p) {
      stopped.add(p);
      return p.stop("SIGTERM");
    },
    async busyWorkers() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        const { rows } = await c.query<{ locked_by: string }>(
          "SELECT t.locked_by FROM tasks t JOIN jobs j ON j.id = t.job_id WHERE t.state = 'running' AND t.locked_by IS NOT NULL ORDER BY j.audio_s DESC NULLS LAST",
        );
        const byPid = new Map(workers.map((w, i) => [w?.child.pid, i]));
        return rows.map((r) => byPid.get(Number(r.locked_by.split(":").at(-2)))).filter((i) => i !== undefined);
      } finally {
        await c.end();
      }
    },
    async destroy() {
      for (const host of [...cuts.keys()]) restore(host);
      await Promise.all(all.map(kill));
      lab.destroy();
      cluster.destroy();
    },
  };
}
