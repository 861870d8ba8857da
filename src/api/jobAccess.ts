// The one way a route finds a caller's job by id: the read table's rules (400 H0001 bad id, checked by the routes'
// `id` schema before the handler runs; 404 H0004 unknown or deleted, 403 H0003 another client's, 410 H0007
// expired), and the read rate limit (429 A0003). The read, export and delete routes all go through here, so they
// cannot disagree about who may see what.
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ApiError } from "../errors.js";
import type { ClientRow } from "../storage/clients.js";
import { getJob, type JobRow } from "../storage/jobs.js";

/** The `id` path parameter of every job route. */
export const JobIdParams = z.object({
  id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "invalid transcribe id")
    .meta({
      description:
        "Job id returned by submit. Anything else not matching the pattern is 400 H0001 (over 200 characters, 404 H0004: no route takes it).",
    }),
});
// The read table's refusals (read, export).
export const READ_ERRORS = ["H0001", "H0002", "H0003", "H0004", "H0007", "A0003"] as const;

/** Counts one read against the client's read rate; 429 A0003 when it polls too fast. */
export async function takeRead(app: FastifyInstance, client: ClientRow): Promise<void> {
  const { config, limiter } = app.sori;
  const rps = client.read_rps ?? config.defaults.readRps;
  if (!(await limiter.take(`read:${client.id}`, rps, config.defaults.readBurst))) {
    throw new ApiError("A0003", `polling too fast: at most ${rps} reads per second (poll about every 5 s)`);
  }
}

export interface LookupOptions {
  /** Also answer 410 H0007 for an expired job (delete does not: an expired job can still be deleted). */
  expired?: "reject" | "allow";
}

/** The caller's job, or the spec's error for why it cannot be had (`id` as JobIdParams checked it). */
export async function findOwnJob(
  app: FastifyInstance,
  client: ClientRow,
  id: string,
  opts: LookupOptions = {},
): Promise<JobRow> {
  const job = await getJob(app.sori.store, id);
  if (!job || job.deleted_at !== null) throw new ApiError("H0004", "no transcription with this id");
  if (job.client_id !== client.id) throw new ApiError("H0003", "this transcription belongs to another client");
  if ((opts.expired ?? "reject") === "reject" && isExpired(job)) {
    throw new ApiError("H0007", "the result has expired and was deleted");
  }
  return job;
}

export const isExpired = (job: JobRow, now = Date.now()): boolean =>
  Boolean(job.expired) || (job.expires_at !== null && job.expires_at < now);
