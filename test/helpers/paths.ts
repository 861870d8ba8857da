// Where the tests and benches find the repository and the shared test audio: the one place on the TypeScript side.
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "..", "..");
/** The shared test audio: SORI_TESTDATA, or `shared/testdata` beside the checkout. */
export const TESTDATA = process.env.SORI_TESTDATA
  ? path.resolve(process.env.SORI_TESTDATA)
  : path.resolve(ROOT, "..", "shared", "testdata");
