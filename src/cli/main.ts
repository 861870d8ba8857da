// The `sori` command line: serve, worker, clients, transcribe, submit, insight.
import { Command, InvalidArgumentError } from "commander";
import { type Config, loadConfig } from "../config.js";
import { createLogger } from "../log.js";
import { start } from "../main.js";
import { clientsCommand } from "./clients.js";
import { insightCommand } from "./insight.js";
import { submitCommand } from "./submit.js";
import { transcribeCommand } from "./transcribe.js";

const int = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError("must be a whole number");
  return n;
};

function runUntilSignal(config: Config, opts: { api: boolean; workers: number | null }): Promise<void> {
  const log = createLogger(config.logLevel);
  return start(config, log, opts).then((running) => {
    log.info({ address: running.address, workers: running.workers }, "sori started");
    let stopping = false;
    const shutdown = (signal: string) => {
      if (stopping) return;
      stopping = true;
      log.info({ signal, grace_s: config.shutdownGraceS }, "shutting down");
      // A stop that hangs (a store that does not answer) must not keep the process: in-flight work is handed back
      // or its lease expires, so leaving is safe.
      setTimeout(
        () => {
          log.error("shutdown did not finish in time; exiting");
          process.exit(1);
        },
        (config.shutdownGraceS + 30) * 1000,
      ).unref();
      running.stop().then(
        () => process.exit(0),
        (err) => {
          log.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
    };
    process.on("SIGINT", () => shutdown("SIGINT"));
    process.on("SIGTERM", () => shutdown("SIGTERM"));
  });
}

const program = new Command("sori").description("self-hosted batch speech-to-text service");

program
  .command("serve")
  .description("run the HTTP API and (unless --no-workers) in-process workers")
  .option("--host <host>", "address to listen on (SORI_HOST)")
  .option("--port <port>", "port to listen on (SORI_PORT)", int)
  .option("--workers <n>", "number of in-process workers (SORI_WORKERS; default: by the host)", int)
  .option("--no-workers", "API only; run `sori worker` elsewhere")
  .action(async (o: { host?: string; port?: number; workers?: number | boolean }) => {
    const config = loadConfig();
    if (o.host) config.host = o.host;
    if (o.port !== undefined) config.port = o.port;
    const workers = o.workers === false ? 0 : typeof o.workers === "number" ? o.workers : config.workers;
    await runUntilSignal(config, { api: true, workers });
  });

program
  .command("worker")
  .description("run workers only, sharing the store with `sori serve --no-workers`")
  .option("--workers <n>", "number of workers (SORI_WORKERS; default: by the host)", int)
  .action(async (o: { workers?: number }) => {
    const config = loadConfig();
    const workers = o.workers ?? config.workers;
    await runUntilSignal(config, { api: false, workers: workers === null ? null : Math.max(1, workers) });
  });

program.addCommand(clientsCommand());
program.addCommand(transcribeCommand());
program.addCommand(submitCommand());
program.addCommand(insightCommand());

program.parseAsync().catch((err: Error) => {
  process.stderr.write(`sori: ${err.message}\n`);
  process.exit(1);
});
