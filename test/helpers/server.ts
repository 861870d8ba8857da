// Starts the real `sori` CLI (from source, through tsx) in a fresh data dir, for HTTP-level tests.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import readline from "node:readline";

import { ROOT, TESTDATA } from "./paths.js";

export { ROOT, TESTDATA };
if (!fs.existsSync(path.join(TESTDATA, "MANIFEST.tsv"))) {
  process.stderr.write(
    `test audio not found at ${TESTDATA}: tests that decode audio will fail; set SORI_TESTDATA to the shared testdata folder\n`,
  );
}

export interface SoriProcess {
  child: ChildProcess;
  url: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
  logs: string[];
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function tempDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), "sori-test-"));
}

/** Runs a sori CLI command to completion and returns its stdout. */
/** An API-only server whose rate limits are out of the way: for tests that are one fast client (fuzzers, abuse). */
export function unthrottledApiEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    SORI_DATA_DIR: tempDataDir(),
    SORI_WORKERS: "0",
    SORI_PORT: "0",
    SORI_DEFAULT_READ_RPS: "10000",
    SORI_DEFAULT_READ_BURST: "10000",
    SORI_AUTH_RPS: "10000",
    SORI_AUTH_BURST: "10000",
    ...extra,
  };
}

/**
 * Node's arguments that run the sori CLI: from source through tsx, or SORI_CLI_JS where set (one bundled file, for a
 * benchmark on a host that has Node but none of the dev dependencies: docs/performance.md, "On a GPU").
 */
function cliArgs(): string[] {
  const bundle = process.env.SORI_CLI_JS;
  return bundle ? [path.resolve(bundle)] : ["--import", "tsx", path.join(ROOT, "src/cli/main.ts")];
}

export function soriSync(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(process.execPath, [...cliArgs(), ...args], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`sori ${args.join(" ")} failed: ${r.stderr}`);
  return r.stdout;
}

export function createClient(
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
): { client_id: string; client_secret: string } {
  return JSON.parse(soriSync(["clients", "create", "--name", "test", "--json", ...extra], env));
}

/**
 * Spawns `sori <command>` from source (through tsx) and waits for "sori started". With `opts.netns` it runs inside
 * that network namespace (test/helpers/netns.ts); `ip netns exec` execs the command, so the child's pid is the sori
 * process itself (kill -9 hits it, not a wrapper).
 */
export async function startSori(
  command: "serve" | "worker",
  env: NodeJS.ProcessEnv,
  args: string[] = [],
  opts: { netns?: string } = {},
): Promise<SoriProcess> {
  // One worker per process unless the test asks for more: SORI_WORKERS unset means one per core, which would make
  // which process claims a job depend on the machine.
  const fullEnv = { ...process.env, SORI_LOG_LEVEL: "info", SORI_WORKERS: "1", ...env };
  const argv = [process.execPath, ...cliArgs(), command, ...args];
  const [file, ...rest] = opts.netns ? ["ip", "netns", "exec", opts.netns, ...argv] : argv;
  const child = spawn(file!, rest, { env: fullEnv, cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const where = opts.netns ? ` in ${opts.netns}` : "";
  const logs: string[] = [];
  const started = new Promise<string>((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`sori ${command}${where} did not start:\n${logs.join("\n")}`)),
      opts.netns ? 90_000 : 60_000,
    );
    readline.createInterface({ input: child.stdout! }).on("line", (line) => {
      logs.push(line);
      if (line.includes('"sori started"')) {
        clearTimeout(t);
        resolve((JSON.parse(line) as { address: string | null }).address ?? "");
      }
    });
    readline.createInterface({ input: child.stderr! }).on("line", (line) => logs.push(line));
    child.once("exit", (code) => {
      clearTimeout(t);
      reject(new Error(`sori ${command}${where} exited with ${code}:\n${logs.join("\n")}`));
    });
  });
  const url = await started;
  return {
    child,
    url,
    dataDir: env.SORI_DATA_DIR ?? "",
    env: fullEnv,
    logs,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill(signal);
      }),
  };
}
