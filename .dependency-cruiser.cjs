// The dependency check (`make test`, `make depcheck`): no cycle, and imports follow the flow
// main/cli -> api -> jobs/callbacks -> pipeline -> stages (text, diarization, insight, refine) -> engine/storage/domain,
// never back (docs/architecture.md, "Dependencies"). Type-only imports count: a type is a dependency too.
const STAGES = "^src/(text|diarization|insight|refine|export|audio|pii|speakers)/";
const LEAVES = "^src/(engine|storage|domain|auth)/|^src/(config|errors|log)\\.ts$|^src/metrics/(index|registry|queue)\\.ts$";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", comment: "a cycle makes two modules one", from: {}, to: { circular: true } },
    {
      name: "entry-points-are-top",
      severity: "error",
      comment: "nothing imports the process entry points",
      from: { pathNot: "^src/(main\\.ts|cli/)" },
      to: { path: "^src/(main\\.ts|cli/)" },
    },
    {
      name: "api-is-top",
      severity: "error",
      comment: "only the entry points import the HTTP layer (metrics/server.ts serves health without it)",
      from: { pathNot: "^src/(main\\.ts|cli/|api/)" },
      to: { path: "^src/api/" },
    },
    {
      name: "jobs-above-pipeline",
      severity: "error",
      comment: "the pipeline, its stages and the leaves know nothing of jobs, tasks or callbacks",
      from: { path: `^src/(pipeline|streaming)/|${STAGES}|${LEAVES}` },
      to: { path: "^src/(jobs|callbacks)/" },
    },
    {
      name: "pipeline-above-stages",
      severity: "error",
      comment: "a stage never imports the pipeline that runs it (src/streaming is a pipeline of its own)",
      from: { path: `${STAGES}|${LEAVES}` },
      to: { path: "^src/(pipeline|streaming)/" },
    },
    {
      name: "stages-above-leaves",
      severity: "error",
      comment: "the engine, the store and the shared types import no stage",
      from: { path: LEAVES },
      to: { path: STAGES },
    },
    {
      name: "domain-is-bottom",
      severity: "error",
      comment: "the shared types and rules depend on no other part of the service",
      from: { path: "^src/domain/" },
      to: { path: "^src/", pathNot: "^src/domain/" },
    },
    {
      name: "blob-stores-apart",
      severity: "error",
      comment: "the blob store index picks an implementation; an implementation never imports the index",
      from: { path: "^src/storage/blobs/(?!index\\.ts)" },
      to: { path: "^src/storage/blobs/index\\.ts$" },
    },
  ],
  options: {
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(node_modules|dist)/" },
    enhancedResolveOptions: { extensions: [".ts", ".js"] },
  },
};
