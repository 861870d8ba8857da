// GET /v1/transcribe (the caller's jobs, newest first, cursor pagination) and DELETE /v1/transcribe/{id} (audio and
// results removed now; later reads answer 404 H0004). Tenant-scoped like the read; docs/extras.md has the bodies.
import type { JobListItem } from "@sori/client";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { ApiError } from "../errors.js";
import { deleteJob, listJobs } from "../storage/jobList.js";
import type { JobRow } from "../storage/jobs.js";
import type { JobState } from "../storage/schema.js";
import { requireClient } from "./auth.js";
import { findOwnJob, isExpired, JobIdParams, takeRead } from "./jobAccess.js";
import { ErrorBody, Int, type Route, route } from "./route.js";

export const LIST_DEFAULT_LIMIT = 20;
export const LIST_MAX_LIMIT = 100;

const STATUSES = ["transcribing", "completed", "failed"] as const;
type Status = (typeof STATUSES)[number];
const STATUS_STATES: Record<Status, JobState[]> = {
  transcribing: ["queued", "running"],
  completed: ["completed"],
  failed: ["failed"],
};

const LIMIT_REFUSAL = `limit must be a whole number from 1 to ${LIST_MAX_LIMIT}`;
const CURSOR_REFUSAL = "cursor is not one this server gave out";
/** A position in the caller's list: the seq of the last job of the page (opaque to clients, and stable while jobs are
 * added). Any such number is a valid position, so the document can state exactly what the server takes. */
const CURSOR_PATTERN = /^[0-9]{1,15}$/;
const ListQuery = z.object({
  status: z.enum(STATUSES, { error: `status must be one of ${STATUSES.join(", ")}` }).optional(),
  // Digits only: a plain number coercion would also take "1e1", " 5" or "0x10".
  limit: z.preprocess(
    (v) => (typeof v === "string" && /^\d{1,3}$/.test(v) ? Number(v) : v),
    z
      .number({ error: LIMIT_REFUSAL })
      .int(LIMIT_REFUSAL)
      .min(1, LIMIT_REFUSAL)
      .max(LIST_MAX_LIMIT, LIMIT_REFUSAL)
      .optional()
      .meta({ default: LIST_DEFAULT_LIMIT }),
  ),
  cursor: z
    .string({ error: CURSOR_REFUSAL })
    .regex(CURSOR_PATTERN, CURSOR_REFUSAL)
    .optional()
    .meta({ description: "next_cursor of the previous page" }),
});
const Time = z.iso.datetime();
const ListItem = z
  .object({
    id: z.string(),
    status: z.enum(STATUSES),
    created_at: Time,
    finished_at: Time.nullable(),
    expires_at: Time.nullable(),
    expired: z.boolean(),
    audio_duration_ms: Int.nullable(),
    error: z.object({ code: z.string() }).optional(),
  })
  .meta({ id: "ListItem" });
const ListPage = z.object({ transcribes: z.array(ListItem), next_cursor: z.string().nullable() });
const Deleted = z.object({ id: z.string(), deleted: z.literal(true) });
// The client package declares the same shapes by hand (it has no zod); the compiler holds the two together.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const _listItemIsTheClients: Same<z.infer<typeof ListItem>, JobListItem> = true;
void _listItemIsTheClients;

const list = {
  method: "get",
  path: "/v1/transcribe",
  summary: "List the caller's jobs, newest first (extra)",
  auth: true,
  query: ListQuery,
  responses: { 200: { description: "One page", content: { "application/json": ListPage } } },
  errors: ["H0001", "H0002", "A0003"],
  errorBody: ErrorBody,
} satisfies Route;

const remove = {
  method: "delete",
  path: "/v1/transcribe/:id",
  summary: "Delete a job's audio and result (extra)",
  auth: true,
  params: JobIdParams,
  responses: { 200: { description: "Deleted", content: { "application/json": Deleted } } },
  errors: ["H0001", "H0002", "H0003", "H0004", "A0003"],
  errorBody: ErrorBody,
} satisfies Route;

export const jobsListDeclarations: Route[] = [list, remove];

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** One row of the list; the wire shape is declared once, in the client package. */
export function listItem(job: JobRow): JobListItem {
  const status = job.state === "queued" || job.state === "running" ? "transcribing" : job.state;
  const item: JobListItem = {
    id: job.id,
    status,
    created_at: new Date(job.created_at).toISOString(),
    finished_at: iso(job.finished_at),
    expires_at: iso(job.expires_at),
    expired: status !== "transcribing" && isExpired(job),
    audio_duration_ms: job.audio_s === null ? null : Math.round(job.audio_s * 1000),
  };
  if (job.state === "failed") item.error = { code: job.error_code ?? "E500" };
  return item;
}

const encodeCursor = (seq: number): string => String(seq);
const decodeCursor = (cursor: string): number => Number(cursor); // checked by CURSOR_PATTERN

export async function jobsListRoutes(app: FastifyInstance): Promise<void> {
  app.addHook("onRequest", requireClient);

  route(app, list, async (req) => {
    const client = req.client!;
    const { status, limit = LIST_DEFAULT_LIMIT, cursor } = req.query;
    const beforeSeq = cursor === undefined || cursor === "" ? undefined : decodeCursor(cursor);
    await takeRead(app, client);
    // One row more than asked tells whether another page follows.
    const rows = await listJobs(app.sori.store, {
      clientId: client.id,
      states: status === undefined ? undefined : STATUS_STATES[status],
      beforeSeq,
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      transcribes: page.map(listItem),
      next_cursor: rows.length > limit && last ? encodeCursor(last.seq) : null,
    };
  });

  route(app, remove, async (req) => {
    const client = req.client!;
    await takeRead(app, client);
    const job = await findOwnJob(app, client, req.params.id, { expired: "allow" });
    const gone = await deleteJob(app.sori.store, job.id);
    if (!gone) throw new ApiError("H0004", "no transcription with this id");
    for (const key of [gone.blobKey, gone.redactedKey]) if (key) await app.sori.blobs.remove(key);
    req.log.info({ job_id: job.id, client_id: client.id, state: job.state }, "job deleted");
    return { id: job.id, deleted: true as const };
  });
}
