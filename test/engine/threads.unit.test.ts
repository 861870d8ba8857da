import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { defaultRegistry, engineJobsFor, forEngines, forStreamEngines } from "../../src/engine/models.js";

describe("forEngines: CPU threads per batch engine", () => {
  const registry = defaultRegistry("/models");

  it("shares the cores among several engines, at least one thread each", () => {
    assert.equal(forEngines(registry, 2, 2).whisper.cpu_threads, 1);
    assert.equal(forEngines(registry, 3, 8).sommers.cpu_threads, 2);
    assert.equal(forEngines(registry, 4, 2).sommers.cpu_threads, 1);
  });

  it("leaves a single engine (and an API-only process) at CTranslate2's default", () => {
    assert.equal(forEngines(registry, 1, 2).sommers.cpu_threads, 0);
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
