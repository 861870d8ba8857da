import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  defaultRegistry,
  defaultWorkers,
  engineJobsFor,
  forEngines,
  forStreamEngines,
} from "../../src/engine/models.js";

describe("forEngines: CPU threads per batch engine", () => {
  const registry = defaultRegistry("/models");

  it("shares the cores among several engines, at least one thread each", () => {
    assert.equal(forEngines(registry, 2, 2).whisper.cpu_threads, 1);
    assert.equal(forEngines(registry, 3, 8).sommers.cpu_threads, 2);
    assert.equal(forEngines(registry, 4, 2).sommers.cpu_threads, 1);
  });

  it("gives a single engine the cores up to CTranslate2's default of 4, and leaves an API-only process alone", () => {
    assert.equal(forEngines(registry, 1, 1).sommers.cpu_threads, 1);
    assert.equal(forEngines(registry, 1, 2).sommers.cpu_threads, 2);
    assert.equal(forEngines(registry, 1, 16).sommers.cpu_threads, 4);
    assert.equal(forEngines(registry, 0, 2).sommers.cpu_threads, 0);
  });

  it("keeps a value the registry sets, and leaves GPU entries and the registry itself as they are", () => {
    const set = { ...registry, sommers: { ...registry.sommers, cpu_threads: 3 } };
    assert.equal(forEngines(set, 2, 2).sommers.cpu_threads, 3);
    const gpu = { ...registry, whisper: { ...registry.whisper, device: "cuda" as const } };
    assert.equal(forEngines(gpu, 2, 16).whisper.cpu_threads, 0);
    forEngines(registry, 2, 2);
    assert.equal(registry.sommers.cpu_threads, 0);
  });
});

describe("engineJobsFor: jobs per engine when SORI_ENGINE_JOBS is not set", () => {
  it("1 on a CPU host (an engine per worker), 4 where a batch model runs on a GPU", () => {
    const registry = defaultRegistry("/models");
    assert.equal(engineJobsFor(registry), 1);
    assert.equal(engineJobsFor({ ...registry, sommers: { ...registry.sommers, device: "cuda" as const } }), 4);
  });
});

describe("defaultWorkers: workers when SORI_WORKERS is not set", () => {
  const registry = defaultRegistry("/models");
  const GiB = 1024 ** 3;

  it("a worker per core on a CPU host, at most one per GiB of memory, at least one", () => {
    assert.equal(defaultWorkers(registry, 1, 2, 8 * GiB), 2);
    assert.equal(defaultWorkers(registry, 1, 16, 6.5 * GiB), 6);
    assert.equal(defaultWorkers(registry, 1, 1, 0.5 * GiB), 1);
    assert.equal(defaultWorkers(registry, 1, 256, 1024 * GiB), 64);
  });

  it("one engine's jobs where a model runs on a GPU", () => {
    const gpu = { ...registry, sommers: { ...registry.sommers, device: "cuda" as const } };
    assert.equal(defaultWorkers(gpu, 4, 16, 128 * GiB), 4);
    assert.equal(defaultWorkers(gpu, 2, 16, 128 * GiB), 2);
  });
});

describe("forStreamEngines: CPU threads per streaming engine", () => {
  const registry = defaultRegistry("/models");

  it("gives each entry left at 0 one thread, and keeps a set value and GPU entries", () => {
    assert.equal(forStreamEngines(registry).sommers.cpu_threads, 1);
    assert.equal(forStreamEngines(registry).whisper.cpu_threads, 1);
    const set = { ...registry, sommers: { ...registry.sommers, cpu_threads: 4 } };
    assert.equal(forStreamEngines(set).sommers.cpu_threads, 4);
    const gpu = { ...registry, whisper: { ...registry.whisper, device: "cuda" as const } };
    assert.equal(forStreamEngines(gpu).whisper.cpu_threads, 0);
    assert.equal(registry.sommers.cpu_threads, 0);
  });
});
