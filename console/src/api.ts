// The console's calls to sori: the same public API as any client (token from /v1/authenticate, Bearer on every
// call). Uploads go through XMLHttpRequest for its upload progress events.
import type { Utterance as WireUtterance } from "@sori/client";

// The wire shapes are declared once, in the client package (packages/client/src/types.ts).
export type { Word } from "@sori/client";
/** `spk_name` (known speakers, docs/speakers.md) is in the client package too; named here as well so that the console
 * type-checks against a client package built before it. */
export type Utterance = WireUtterance & { spk_name?: string };

export interface Session {
  token: string;
  expireAt: number;
  clientId: string;
}

export interface Job {
  id: string;
  status: "transcribing" | "completed" | "failed";
  results?: { utterances: Utterance[] };
  error?: { code: string; message: string };
}

export interface ListItem {
  id: string;
  status: "transcribing" | "completed" | "failed";
  created_at: string;
  audio_duration_ms: number | null;
  error?: { code: string };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    msg: string,
  ) {
    super(`${code}: ${msg}`);
  }
}

async function fail(r: Response): Promise<never> {
  const body = (await r.json().catch(() => ({}))) as { code?: string; msg?: string };
  throw new ApiError(r.status, body.code ?? String(r.status), body.msg ?? r.statusText);
}

export async function login(clientId: string, clientSecret: string): Promise<Session> {
  const r = await fetch("/v1/authenticate", {
    method: "POST",
    body: new URLSearchParams({ client_id: clientId, client_secret: clientSecret }),
  });
  if (!r.ok) await fail(r);
  const t = (await r.json()) as { access_token: string; expire_at: number };
  return { token: t.access_token, expireAt: t.expire_at, clientId };
}

const auth = (s: Session): HeadersInit => ({ authorization: `Bearer ${s.token}` });

export async function listJobs(s: Session): Promise<ListItem[]> {
  const r = await fetch("/v1/transcribe?limit=50", { headers: auth(s) });
  if (!r.ok) await fail(r);
  return ((await r.json()) as { transcribes: ListItem[] }).transcribes;
}

export async function readJob(s: Session, id: string): Promise<Job> {
  const r = await fetch(`/v1/transcribe/${encodeURIComponent(id)}`, { headers: auth(s) });
  if (!r.ok) await fail(r);
  return (await r.json()) as Job;
}

export async function deleteJob(s: Session, id: string): Promise<void> {
  const r = await fetch(`/v1/transcribe/${encodeURIComponent(id)}`, { method: "DELETE", headers: auth(s) });
  if (!r.ok) await fail(r);
}

export async function exportJob(s: Session, id: string, format: "srt" | "vtt" | "txt"): Promise<Blob> {
  const r = await fetch(`/v1/transcribe/${encodeURIComponent(id)}/export?format=${format}`, { headers: auth(s) });
  if (!r.ok) await fail(r);
  return r.blob();
}

/** POST /v1/transcribe with progress (0..1) as the file is sent. */
export function submit(s: Session, file: File, config: object, onProgress: (f: number) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    form.append("config", JSON.stringify(config));
    form.append("file", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/v1/transcribe");
    xhr.setRequestHeader("authorization", `Bearer ${s.token}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError(0, "network", "the upload failed"));
    xhr.onload = () => {
      let body: { id?: string; code?: string; msg?: string } = {};
      try {
        body = JSON.parse(xhr.responseText) as typeof body;
      } catch {
        /* not JSON */
      }
      if (xhr.status === 200 && body.id) resolve(body.id);
      else reject(new ApiError(xhr.status, body.code ?? String(xhr.status), body.msg ?? xhr.statusText));
    };
    xhr.send(form);
  });
}
