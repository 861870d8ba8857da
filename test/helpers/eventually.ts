// Clean-up that follows a job's final state (its audio is removed after the outcome is recorded, see
// src/jobs/worker.ts) is checked by polling: a test that reads it at the moment the job turns final races the worker.
import assert from "node:assert/strict";

/** Retries `check` until it stops throwing, and rethrows its last failure after `timeoutMs`. */
export async function eventually(check: () => unknown | Promise<unknown>, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** `actual()` deep-equals `expected` within `timeoutMs`. */
export const eventuallyDeepEqual = <T>(actual: () => T | Promise<T>, expected: T, message?: string): Promise<void> =>
  eventually(async () => assert.deepEqual(await actual(), expected, message));
