// Bundles the console (Preact + TypeScript) into console/dist with esbuild: app.js, app.css, index.html.
import fs from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const here = import.meta.dirname;
const out = path.join(here, "dist");
fs.rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: { app: path.join(here, "src/main.tsx") },
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: out,
  logLevel: "warning",
});
fs.copyFileSync(path.join(here, "index.html"), path.join(out, "index.html"));
