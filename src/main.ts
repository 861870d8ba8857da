// Wires the parts together for `sori serve` and `sori worker`, and shuts them down in order on a signal.
import { availableParallelism, hostname, totalmem } from "node:os";
import type { Logger } from "pino";
import { RateLimiter } from "./api/rateLimit.js";
import { buildServer } from "./api/server.js";
import { loadSigningKey, tokenIssuer } from "./auth/tokens.js";
import { CallbackSender } from "./callbacks/sender.js";
import { loadCallbackKey } from "./callbacks/sign.js";
import type { Config } from "./config.js";
import { Engine } from "./engine/client.js";
import { hostLayout } from "./engine/layout.js";
import { loadDiarizationModels, loadModelRegistry } from "./engine/models.js";
import { insightBackend, type LlmBackend, sharedPrompts } from "./insight/index.js";
import { sweepExpired } from "./jobs/retention.js";
import { listenForJobs, notifyJobQueued } from "./jobs/wakeup.js";
import { Worker } from "./jobs/worker.js";
import { startOpsServer } from "./metrics/server.js";
import { refinerFromConfig } from "./refine/refiner.js";
import { openBlobStore } from "./storage/blobs/index.js";
import { sweepSpool } from "./storage/blobs/spool.js";
import { listClients } from "./storage/clients.js";
import { openStore, type Store } from "./storage/db.js";
import { StoreRateLimiter } from "./storage/rateBuckets.js";

export interface Running {
  address: string | null;
  /** Workers started: as asked, or by the host when the count was null. */
  workers: number;
  stop(): Promise<void>;
}

/** The memory this process may use: the host's, or its cgroup's limit where that is lower (a container). */
function hostMemory(): number {
  const limit = process.constrainedMemory?.() ?? 0;
  return limit > 0 ? Math.min(limit, totalmem()) : totalmem();
}

/** `opts.workers`: the workers to run; null: by the host (SORI_WORKERS unset, docs/configuration.md). */
export async function start(
  config: Config,
  log: Logger,
  opts: { api: boolean; workers: number | null },
): Promise<Running> {
  const store = await openStore(config);
  const blobs = await openBlobStore(config, store);
  // The workers share engines (by default one for the host): each runs up to SORI_ENGINE_JOBS transcriptions at
  // once on SORI_ENGINE_DECODERS decoders, their clips in shared batches, and holds each model once (docs/engine.md,
  // "One engine for the host").
  const registry = loadModelRegistry(config.modelsDir, config.modelsFile, config.python);
  const layout = hostLayout(
    registry,
    { cores: availableParallelism(), memoryBytes: hostMemory() },
    { workers: opts.workers, engineJobs: config.engineJobs, decoders: config.engineDecoders },
  );
  const { workers: workerCount, engines: engineCount, engineJobs, models } = layout;
  // An operator's diarization models, checked here (a bad one stops the start) where engines will run them.
  const diarizationModels = workerCount > 0 ? loadDiarizationModels(config.modelsFile, config.python) : {};
  if (workerCount > 0) {
    log.info(
      { workers: workerCount, engines: engineCount, engine_jobs: engineJobs, decoders: layout.decoders },
      "layout",
    );
  }

  // One insight model per process, shared by its workers, got ready in the background (prepareInsight).
  const insight =
    workerCount > 0 ? insightBackend(config, (msg, fields) => log.info({ part: "insight", ...fields }, msg)) : null;
  if (insight) await prepareInsight(insight, config, store);
  const refiner = refinerFromConfig(config);
  const callbacks = new CallbackSender({
    store,
    key: loadCallbackKey(config.dataDir),
    log: log.child({ part: "callbacks" }),
    allowPrivate: config.callbackAllowPrivate,
  });
  const engines = Array.from({ length: engineCount }, (_, i) => {
    const elog = log.child({ engine_index: i });
    return new Engine({
      python: config.python,
      nice: config.engineNice,
      // Both sides read the same value: the engine admits as many transcriptions as its workers send.
      env: {
        SORI_ENGINE_JOBS: String(engineJobs),
        SORI_ENGINE_DECODERS: String(layout.decoders),
        ...diarizationModels,
      },
      onLog: (line) => elog.debug({ engine: line }, "engine log"),
    });
  });
  const workers: Worker[] = [];
  for (let i = 0; i < workerCount; i++) {
    const id = `${hostname()}:${process.pid}:${i}`;
    const wlog = log.child({ worker: id });
    workers.push(
      new Worker(id, {
        store,
        blobs,
        // Round-robin: with 3 workers and 2 jobs per engine, workers 0 and 2 share the first engine.
        engine: engines[i % engineCount]!,
        models,
        config,
        log: wlog,
        insight,
        refiner,
        onFinal: (job) => callbacks.notify(job),
      }),
    );
  }
  for (const w of workers) w.start();
  const nudge = (): void => {
    for (const w of workers) w.nudge();
  };
  // Jobs queued by API processes elsewhere wake this process's workers at once (polling stays the fallback).
  const listener =
    workers.length && store.dialect === "postgres" && config.databaseUrl
      ? listenForJobs(config.databaseUrl, nudge, log.child({ part: "wakeup" }))
      : null;
  // Spool files older than these were left by a crash (src/storage/blobs/spool.ts): an upload cut off mid-way is
  // abandoned once untouched for SORI_ORPHAN_AGE_S; an engine copy lives as long as an engine run may, plus that margin.
  const spoolMaxAgeMs = {
    upload: config.orphanAgeS * 1000,
    engine: (2 * config.maxAudioS * config.engineTimeoutFactor + config.orphanAgeS) * 1000,
  };

  const sweep = setInterval(() => {
    sweepSpool(config.dataDir, spoolMaxAgeMs).catch((err) =>
      log.warn({ err: (err as Error).message }, "spool sweep failed"),
    );
    sweepExpired(store, blobs, Date.now(), config.orphanAgeS * 1000)
      .then((r) => (r.expired || r.orphans) && log.info(r, "retention sweep"))
      .catch((err) => log.warn({ err: (err as Error).message }, "retention sweep failed"));
  }, config.sweepS * 1000);

  let app: Awaited<ReturnType<typeof buildServer>> | null = null;
  let address: string | null = null;
  if (opts.api) {
    const tokens = tokenIssuer(loadSigningKey(config.dataDir), config.tokenTtlS);
    app = await buildServer(
      {
        config,
        store,
        blobs,
        tokens,
        // Shared by every API host in scale-out; in this process alone for the embedded default.
        limiter: config.rateLimits === "shared" ? new StoreRateLimiter(store) : new RateLimiter(),
        onJobQueued: () => {
          nudge();
          notifyJobQueued(store).catch((err) =>
            log.warn({ err: (err as Error).message }, "job notification failed; workers elsewhere poll"),
          );
        },
        engines,
      },
      log,
    );
    address = await app.listen({ host: config.host, port: config.port });
  }
  // A worker host has no API; its /metrics and /readyz, when asked for, are on a port of their own.
  const opsServer = !opts.api && config.metrics.port ? await startOpsServer(config, store, engines) : null;

  return {
    address,
    workers: workerCount,
    async stop() {
      clearInterval(sweep);
      await app?.close();
      await opsServer?.close();
      await listener?.close();
      await Promise.all(workers.map((w) => w.stop(config.shutdownGraceS * 1000)));
      // Once every worker has finished or handed back its task: nothing of ours is left in the engines.
      await Promise.all(engines.map((e) => e.stop()));
      await callbacks.stop();
      await insight?.close();
      await blobs.close();
      await store.close();
    },
  };
}

/**
 * Starts loading the insight model and evaluating its shared prompt now, in the background, so that the first
 * insight job after a start does not pay for it (docs/enterprise.md, "Startup"). `auto`: only where the store has
 * an enabled Enterprise client, so a deployment that never serves insight never maps the 1.1 GB model.
 */
async function prepareInsight(llm: LlmBackend, config: Config, store: Store): Promise<void> {
  const mode = config.insight.prepare;
  if (mode === "never") return;
  if (mode === "auto" && !(await listClients(store)).some((c) => c.tier === "enterprise" && !c.disabled)) return;
  llm.prepare?.(sharedPrompts());
}
