// A minimal client of the spec's API, as an RTZR-style client would use it (fetch + FormData). Every JSON answer it
// gets is checked against the served OpenAPI document's schema for that route and status (documented.ts).
import fs from "node:fs";
import path from "node:path";
import { assertDocumented } from "./documented.js";

export async function authenticate(url: string, id: string, secret: string): Promise<string> {
  const r = await fetch(`${url}/v1/authenticate`, {
    method: "POST",
    body: new URLSearchParams({ client_id: id, client_secret: secret }),
  });
  if (r.status !== 200) throw new Error(`authenticate: ${r.status} ${await r.text()}`);
  const body = (await r.json()) as { access_token: string };
  assertDocumented("POST /v1/authenticate", r.status, body);
  return body.access_token;
}

export async function submit(
  url: string,
  token: string,
  file: string | Blob,
  config: unknown = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new FormData();
  form.append("config", typeof config === "string" ? config : JSON.stringify(config));
  const blob = typeof file === "string" ? new Blob([fs.readFileSync(file)]) : file;
  form.append("file", blob, typeof file === "string" ? path.basename(file) : "upload.bin");
  const r = await fetch(`${url}/v1/transcribe`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  const body = (await r.json()) as Record<string, unknown>;
  assertDocumented("POST /v1/transcribe", r.status, body);
  return { status: r.status, body };
}

export async function read(url: string, token: string, id: string, query = ""): Promise<{ status: number; body: any }> {
  const r = await fetch(`${url}/v1/transcribe/${id}${query}`, { headers: { authorization: `Bearer ${token}` } });
  const body = await r.json();
  assertDocumented("GET /v1/transcribe/{id}", r.status, body);
  return { status: r.status, body };
}

/** Polls until the job is final (completed or failed). */
export async function waitFinal(url: string, token: string, id: string, timeoutMs = 180_000): Promise<any> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const r = await read(url, token, id);
    if (r.status !== 200) throw new Error(`read ${id}: ${r.status} ${JSON.stringify(r.body)}`);
    if (r.body.status !== "transcribing") return r.body;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`job ${id} not final after ${timeoutMs} ms`);
}
