// A throwaway PostgreSQL cluster for tests that must stop, restart or network-isolate the database: the machine's
// shared server is used by other suites and must never be restarted. initdb + pg_ctl in a temp dir, own port,
// trust auth, fsync off (a clean restart loses nothing; only an OS crash would, and tests do not survive that).
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

export interface PgCluster {
  port: number;
  /** Addresses it listens on (127.0.0.1 plus any asked for). */
  hosts: string[];
  /** URL of a database, through one of the listen addresses (127.0.0.1 by default). */
  url(database: string, host?: string): string;
  /** Creates a fresh, uniquely named database and returns its name. */
  createDatabase(prefix?: string): Promise<string>;
  /** `pg_ctl stop -m fast`: clients see their connections closed and new ones refused until start(). */
  stopServer(): void;
  startServer(): void;
  /** The server's process id while it runs (its postmaster), else null. */
  serverPid(): number | null;
  /** Stops and removes the cluster and its directory (safe to call twice). */
  destroy(): void;
}

/** The newest installed server's bin dir, or null. SORI_TEST_PG_BIN overrides. */
export function pgBinDir(): string | null {
  if (process.env.SORI_TEST_PG_BIN) return process.env.SORI_TEST_PG_BIN;
  const base = "/usr/lib/postgresql";
  if (!fs.existsSync(base)) return null;
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(base, versions[0], "bin") : null;
}

/** Why a private cluster cannot be started here, or null when it can. */
export function pgClusterUnavailable(): string | null {
  if (!pgBinDir())
    return "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql; set SORI_TEST_PG_BIN";
  if (process.getuid?.() === 0 && spawnSync("id", ["postgres"]).status !== 0) {
    return "running as root but there is no postgres user to run initdb as";
  }
  return null;
}

/** A free TCP port on 127.0.0.1 (a tiny race with other processes is accepted: tests start the server at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startPgCluster(opts: { listen?: string[] } = {}): Promise<PgCluster> {
  const bin = pgBinDir();
  if (!bin) throw new Error("no PostgreSQL server binaries found");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-pg-"));
  const data = path.join(dir, "data");
  // initdb refuses to run as root: the cluster belongs to the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) spawnSync("chown", ["postgres:", dir]);
  const run = (cmd: string, args: string[]): void => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", path.join(bin, cmd), ...args]]
      : [path.join(bin, cmd), args];
    const r = spawnSync(file, argv, { encoding: "utf8", timeout: 120_000 });
    if (r.status !== 0) {
      const logFile = path.join(dir, "server.log");
      const serverLog = fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8").slice(-2000) : "";
      throw new Error(`${cmd} ${args.join(" ")} failed (${r.status}): ${r.stderr}${r.stdout}\n${serverLog}`);
    }
  };
  run("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"]);
  const port = await freePort();
  const hosts = ["127.0.0.1", ...(opts.listen ?? [])];
  const serverOpts = [
    `-p ${port}`,
    `-c listen_addresses='${hosts.join(",")}'`,
    `-c unix_socket_directories='${dir}'`,
    "-c fsync=off",
    "-c max_connections=200",
  ].join(" ");
  // Trust for the private test network too (the default hba only covers loopback).
  fs.appendFileSync(path.join(data, "pg_hba.conf"), "host all all 0.0.0.0/0 trust\n");
  const startServer = () =>
    run("pg_ctl", ["-D", data, "-l", path.join(dir, "server.log"), "-o", serverOpts, "-w", "-t", "60", "start"]);
  const stopServer = () => run("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  try {
    startServer();
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  let destroyed = false;
  const url = (database: string, host = "127.0.0.1") => `postgres://postgres@${host}:${port}/${database}`;
  return {
    port,
    hosts,
    url,
    async createDatabase(prefix = "sori_test") {
      const name = `${prefix}_${process.pid}_${Math.random().toString(16).slice(2, 10)}`;
      const c = new pg.Client({ connectionString: url("postgres") });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE ${name}`);
      } finally {
        await c.end();
      }
      return name;
    },
    stopServer,
    startServer,
    serverPid() {
      try {
        return Number(fs.readFileSync(path.join(data, "postmaster.pid"), "utf8").split("\n")[0]) || null;
      } catch {
        return null;
      }
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "-t", "30", "stop"]);
      } catch {
        // already stopped
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
