import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { hostLayout, streamEngines } from "../../src/engine/layout.js";
import { defaultRegistry, forStreamEngines } from "../../src/engine/models.js";

const GiB = 1024 ** 3;
const none = { workers: null, engineJobs: null, decoders: null };

describe("hostLayout: workers, engines and decoders by the host", () => {
  const registry = defaultRegistry("/models");
  const gpu = { ...registry, sommers: { ...registry.sommers, device: "cuda" as const } };

  it("runs one engine on a CPU host: a worker per core, a decoder per core on one thread each", () => {
    const two = hostLayout(registry, { cores: 2, memoryBytes: 8 * GiB }, none);
    assert.deepEqual([two.workers, two.engines, two.engineJobs, two.decoders], [2, 1, 2, 2]);
    assert.equal(two.models.sommers.cpu_threads, 1);
    assert.equal(two.models.whisper.inter_threads, 2);
    const many = hostLayout(registry, { cores: 16, memoryBytes: 128 * GiB }, none);
    assert.deepEqual([many.workers, many.engines, many.decoders], [16, 1, 16]);
    assert.equal(many.models.sommers.inter_threads, 16);
    assert.equal(registry.sommers.cpu_threads, 0); // the registry itself is not changed
  });

  it("caps the workers by memory, not the decoders", () => {
    const small = hostLayout(registry, { cores: 16, memoryBytes: 6.5 * GiB }, none);
    assert.deepEqual([small.workers, small.engines, small.decoders], [6, 1, 16]);
    assert.equal(hostLayout(registry, { cores: 1, memoryBytes: 0.5 * GiB }, none).workers, 1);
    assert.equal(hostLayout(registry, { cores: 256, memoryBytes: 1024 * GiB }, none).workers, 64);
  });

  it("shares the cores among the engines an explicit job count makes", () => {
    const apart = hostLayout(registry, { cores: 2, memoryBytes: 8 * GiB }, { ...none, engineJobs: 1 });
    assert.deepEqual([apart.workers, apart.engines, apart.decoders], [2, 2, 1]);
    const one = hostLayout(registry, { cores: 4, memoryBytes: 8 * GiB }, { ...none, workers: 1 });
    assert.deepEqual([one.engines, one.decoders], [1, 4]);
    const set = hostLayout(registry, { cores: 8, memoryBytes: 8 * GiB }, { ...none, decoders: 3 });
    assert.equal(set.models.sommers.inter_threads, 3);
  });

  it("keeps a model entry's own threads", () => {
    const own = { ...registry, sommers: { ...registry.sommers, cpu_threads: 3, inter_threads: 1 } };
    const layout = hostLayout(own, { cores: 8, memoryBytes: 8 * GiB }, none);
    assert.equal(layout.models.sommers.cpu_threads, 3);
    assert.equal(layout.models.sommers.inter_threads, 1);
    assert.equal(layout.models.whisper.inter_threads, 8);
  });

  it("runs 4 jobs on one engine with one decoder where a model is on a GPU, its threads untouched", () => {
    const g = hostLayout(gpu, { cores: 16, memoryBytes: 128 * GiB }, none);
    assert.deepEqual([g.workers, g.engines, g.engineJobs, g.decoders], [4, 1, 4, 1]);
    assert.equal(g.models.sommers.cpu_threads, 0);
    assert.equal(g.models.sommers.inter_threads, undefined);
    assert.equal(hostLayout(gpu, { cores: 16, memoryBytes: 128 * GiB }, { ...none, engineJobs: 2 }).workers, 2);
  });
});

describe("streamEngines: stream engines by the host", () => {
  const registry = defaultRegistry("/models");
  it("runs one per core, at most one per session and 16; one where a model is on a GPU", () => {
    assert.equal(streamEngines(registry, 2, 4), 2);
    assert.equal(streamEngines(registry, 16, 4), 4);
    assert.equal(streamEngines(registry, 64, 64), 16);
    assert.equal(streamEngines(registry, 1, 4), 1);
    assert.equal(streamEngines({ ...registry, whisper: { ...registry.whisper, device: "cuda" } }, 16, 4), 1);
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
