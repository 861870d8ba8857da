// Where the benches find the repository and the shared test audio (SORI_TESTDATA, as in the tests).
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "..");
export const TESTDATA = process.env.SORI_TESTDATA
  ? path.resolve(process.env.SORI_TESTDATA)
  : path.resolve(ROOT, "..", "shared", "testdata");
