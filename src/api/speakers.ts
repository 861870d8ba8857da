// Known speakers, an extension (docs/speakers.md), routed only where SORI_SPEAKERS is on: POST /v1/speakers enrolls
// one voice from uploaded speech, GET lists the caller's speakers, DELETE removes one (its voiceprint with it), and
// POST /v1/speakers/{id}/audio adds speech to one. Only voiceprints are stored; the uploads are deleted before the
// answer. A speaker is its client's alone: to any other client it does not exist (404 H0004).
import fs from "node:fs";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { containerDuration } from "../audio/duration.js";
import { AUDIO_PART_TYPES, detectFormat } from "../audio/format.js";
import { newId } from "../domain/ids.js";
import { Engine } from "../engine/client.js";
import { ApiError } from "../errors.js";
import {
  cosine,
  enrollVoice,
  mergePrints,
  SPEAKER_OPTIONS,
  staleVoiceprint,
  VOICEPRINT_MODEL,
  type Voiceprint,
} from "../speakers/index.js";
import {
  countSpeakers,
  deleteSpeaker,
  getSpeaker,
  insertSpeaker,
  listSpeakers,
  updateVoiceprint,
} from "../storage/speakers.js";
import { requireClient } from "./auth.js";
import { takeRead } from "./jobAccess.js";
import { ErrorBody, type Route, route } from "./route.js";
import { readUpload, singleField, type Upload } from "./upload.js";

const OPTS = SPEAKER_OPTIONS;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

const SpeakerIdParams = z.object({
  id: z.string().regex(ID_PATTERN, "invalid speaker id").meta({ description: "Speaker id returned by enroll" }),
});
// 1 to 100 characters, at least one not a space, no control characters; stored without surrounding spaces.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the pattern exists to refuse control characters
const NAME_PATTERN = /^[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f][^\x00-\x1f\x7f-\x9f]*$/;
const NAME_REFUSAL = "name must be 1 to 100 characters, not all spaces, without control characters";
const SpeakerName = z
  .string({ error: NAME_REFUSAL })
  .min(1, NAME_REFUSAL)
  .max(100, NAME_REFUSAL)
  .regex(NAME_PATTERN, NAME_REFUSAL)
  .meta({ description: "What utterances of this voice carry as spk_name; surrounding spaces are dropped" });
const EnrollForm = z.object({
  name: SpeakerName,
  file: z.string().meta({
    format: "binary",
    description: `One person's speech: 1 to ${OPTS.maxFiles} file parts (mp4, m4a, mp3, amr, flac or wav), ${OPTS.minEnrollS} s to ${OPTS.maxEnrollS / 60} min of speech in all`,
  }),
});
const AddForm = z.object({ file: EnrollForm.shape.file });
const Enrolled = z
  .object({ id: z.string(), name: z.string(), speech_s: z.number() })
  .meta({ id: "EnrolledSpeaker", description: "speech_s: seconds of speech the voiceprint is made from" });
const Time = z.iso.datetime();
const SpeakerItem = z
  .object({
    id: z.string(),
    name: z.string(),
    speech_s: z.number(),
    model: z.string(),
    created_at: Time,
    updated_at: Time,
  })
  .meta({ id: "Speaker", description: "model: the voiceprint's embedding model (docs/speakers.md)" });
const SpeakerList = z.object({ speakers: z.array(SpeakerItem) });
const Deleted = z.object({ id: z.string(), deleted: z.literal(true) });
const UPLOAD_ERRORS = ["H0001", "H0002", "H0004", "H0005", "H0006", "H0010", "A0002"] as const;

const enroll = {
  method: "post",
  path: "/v1/speakers",
  summary: "Enroll a known speaker from speech (extension, docs/speakers.md)",
  auth: true,
  upload: { form: EnrollForm, encoding: { file: { contentType: AUDIO_PART_TYPES } } },
  responses: {
    200: {
      description: "Enrolled",
      content: { "application/json": Enrolled },
      links: {
        add_audio: { operationId: "post_v1_speakers_id_audio", parameters: { id: "$response.body#/id" } },
        delete: { operationId: "delete_v1_speakers_id", parameters: { id: "$response.body#/id" } },
      },
    },
  },
  errors: UPLOAD_ERRORS.filter((c) => c !== "H0004"),
  errorBody: ErrorBody,
} satisfies Route;

const addAudio = {
  method: "post",
  path: "/v1/speakers/:id/audio",
  summary: "Add speech to a known speaker (extension, docs/speakers.md)",
  auth: true,
  params: SpeakerIdParams,
  upload: { form: AddForm, encoding: { file: { contentType: AUDIO_PART_TYPES } } },
  responses: {
    200: { description: "The speaker, with its new voiceprint", content: { "application/json": Enrolled } },
  },
  errors: [...UPLOAD_ERRORS],
  errorBody: ErrorBody,
} satisfies Route;

const list = {
  method: "get",
  path: "/v1/speakers",
  summary: "List the caller's known speakers (extension, docs/speakers.md)",
  auth: true,
  responses: { 200: { description: "Oldest first", content: { "application/json": SpeakerList } } },
  errors: ["H0002", "A0003"],
  errorBody: ErrorBody,
} satisfies Route;

const remove = {
  method: "delete",
  path: "/v1/speakers/:id",
  summary: "Delete a known speaker and its voiceprint (extension, docs/speakers.md)",
  auth: true,
  params: SpeakerIdParams,
  responses: { 200: { description: "Deleted", content: { "application/json": Deleted } } },
  errors: ["H0001", "H0002", "H0004", "A0003"],
  errorBody: ErrorBody,
} satisfies Route;

export const speakerDeclarations: Route[] = [enroll, addAudio, list, remove];

const iso = (ms: number): string => new Date(ms).toISOString();

/** The name part, checked by the schema the document shows. */
function checkName(name: string | undefined): string {
  const checked = SpeakerName.safeParse(name);
  if (!checked.success) throw new ApiError("H0001", NAME_REFUSAL);
  return checked.data.trim();
}

export async function speakerRoutes(app: FastifyInstance): Promise<void> {
  const { config } = app.sori;
  // Enrollment embeds the speech at once, on an engine of this API process (started at the first enrollment, at the
  // batch engines' CPU priority). At most MAX_ENROLLING at once per process: beyond, 429 A0002.
  const engine = new Engine({
    python: config.python,
    nice: config.engineNice,
    onLog: (line) => app.log.debug({ engine: line }),
  });
  const MAX_ENROLLING = 2;
  let enrolling = 0;
  app.addHook("onClose", async () => engine.stop());
  app.addHook("onRequest", requireClient);

  /** The uploaded speech's voiceprint; the uploads are deleted whatever happens. */
  async function voiceOf<F>(
    req: FastifyRequest,
    textParts: string[],
    fields: (upload: Upload) => F,
  ): Promise<{ voice: Voiceprint; fields: F }> {
    const declared = Number(req.headers["content-length"] ?? 0);
    const tooLarge = `the enrollment files exceed ${OPTS.maxUploadBytes} bytes together`;
    if (declared > OPTS.maxUploadBytes + 1024 * 1024) {
      throw new ApiError("H0005", tooLarge);
    }
    if (enrolling >= MAX_ENROLLING) {
      throw new ApiError("A0002", "enrollments are running at this server's limit; try again");
    }
    enrolling++;
    try {
      const upload = await readUpload(req, {
        dataDir: config.dataDir,
        maxBytes: OPTS.maxUploadBytes,
        maxFiles: OPTS.maxFiles,
        tooLarge,
        textParts,
      });
      try {
        const checked = fields(upload);
        if (upload.files.length === 0) throw new ApiError("H0001", "at least one file part is required");
        let totalS = 0;
        for (const f of upload.files) {
          if (f.bytes === 0) throw new ApiError("H0010", "a file is empty");
          const format = await detectFormat(f.path);
          totalS += (await containerDuration(f.path, format)) ?? 0;
        }
        if (totalS > OPTS.maxAudioS) {
          throw new ApiError(
            "H0006",
            `the enrollment audio is ${Math.round(totalS)} s long; the limit is ${OPTS.maxAudioS} s`,
          );
        }
        const timeoutMs = (120 + OPTS.maxAudioS * config.engineTimeoutFactor) * 1000;
        const paths = upload.files.map((f) => f.path);
        return { voice: await enrollVoice(engine, paths, OPTS, timeoutMs), fields: checked };
      } finally {
        await Promise.all(upload.files.map((f) => fs.promises.rm(f.path, { force: true })));
      }
    } finally {
      enrolling--;
    }
  }

  route(app, enroll, async (req) => {
    const client = req.client!;
    if ((await countSpeakers(app.sori.store, client.id)) >= OPTS.maxPerClient) {
      throw new ApiError("H0001", `a client may enroll at most ${OPTS.maxPerClient} speakers: delete some first`);
    }
    const { voice, fields: name } = await voiceOf(req, ["name"], (u) => checkName(singleField(u, "name")));
    const id = newId(16);
    await insertSpeaker(app.sori.store, client.id, { id, name, ...voice });
    req.log.info({ speaker_id: id, client_id: client.id, speech_s: voice.speechS }, "speaker enrolled");
    return { id, name, speech_s: voice.speechS };
  });

  route(app, addAudio, async (req) => {
    const client = req.client!;
    const speaker = await getSpeaker(app.sori.store, client.id, req.params.id);
    if (!speaker) throw new ApiError("H0004", "no speaker with this id");
    if (speaker.model !== VOICEPRINT_MODEL) throw new ApiError("H0001", staleVoiceprint(speaker));
    const { voice } = await voiceOf(req, [], () => null);
    // Added speech must be the speaker's own: by the rule a job names a speaker with, as heard wideband or, where
    // both have phone prints, on the phone (a call added to a studio enrollment matches there).
    const score = cosine(speaker.embedding, voice.embedding);
    const phone =
      speaker.embeddingPhone && voice.embeddingPhone ? cosine(speaker.embeddingPhone, voice.embeddingPhone) : -1;
    if (score < OPTS.threshold && phone < OPTS.phoneThreshold) {
      throw new ApiError(
        "H0001",
        `the added speech does not match this speaker's voice (cosine ${score.toFixed(2)}, ${OPTS.threshold} needed)`,
      );
    }
    const merged: Voiceprint = mergePrints(speaker, voice);
    if (merged.speechS > OPTS.maxEnrollS) {
      throw new ApiError(
        "H0001",
        `too much speech: the speaker would have ${merged.speechS.toFixed(1)} s, at most ${OPTS.maxEnrollS} s are kept`,
      );
    }
    if (!(await updateVoiceprint(app.sori.store, client.id, speaker.id, merged))) {
      throw new ApiError("H0004", "no speaker with this id");
    }
    return { id: speaker.id, name: speaker.name, speech_s: merged.speechS };
  });

  route(app, list, async (req) => {
    const client = req.client!;
    await takeRead(app, client);
    const speakers = await listSpeakers(app.sori.store, client.id);
    return {
      speakers: speakers.map((s) => ({
        id: s.id,
        name: s.name,
        speech_s: s.speechS,
        model: s.model,
        created_at: iso(s.createdAt),
        updated_at: iso(s.updatedAt),
      })),
    };
  });

  route(app, remove, async (req) => {
    const client = req.client!;
    await takeRead(app, client);
    if (!(await deleteSpeaker(app.sori.store, client.id, req.params.id))) {
      throw new ApiError("H0004", "no speaker with this id");
    }
    req.log.info({ speaker_id: req.params.id, client_id: client.id }, "speaker deleted");
    return { id: req.params.id, deleted: true as const };
  });
}
