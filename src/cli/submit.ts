// `sori submit FILE [--wait] [--format srt]`: submits to a running sori server (local or remote) through the
// @sori/client package, as any API client would, and prints the job id or, with --wait, the result.
import fs from "node:fs";
import path from "node:path";
import { SoriClient, SoriError, type TranscribeConfig } from "@sori/client";
import { Command, InvalidArgumentError, Option } from "commander";
import { z } from "zod";
import { loadConfig } from "../config.js";

interface SubmitOptions {
  url: string;
  credentials?: string;
  clientId?: string;
  clientSecret?: string;
  config: string;
  wait: boolean;
  format: "json" | "srt" | "vtt" | "txt";
  pollMs: number;
}

const positive = (v: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("must be a whole number of at least 1");
  return n;
};

const CredentialsFile = z.object({ client_id: z.string().min(1), client_secret: z.string().min(1) });
// The config is sent as given: the server checks it (and may be a newer version that knows more fields).
const ConfigObject = z.looseObject({});

/** JSON text read through a schema; `what` names the input in the error. */
function parseJson<T extends z.ZodType>(text: string, schema: T, what: string): z.infer<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new Error(`${what}: ${z.prettifyError(parsed.error).replaceAll("\n", "; ")}`);
  return parsed.data;
}

/** client_id and client_secret from the flags, else a credentials file, else the local demo client. */
function credentials(o: SubmitOptions): { clientId: string; clientSecret: string } {
  if (o.clientId && o.clientSecret) return { clientId: o.clientId, clientSecret: o.clientSecret };
  const file = o.credentials ?? path.join(loadConfig().dataDir, "demo-client.json");
  if (!fs.existsSync(file)) {
    throw new Error(
      "no credentials: pass --client-id and --client-secret, or --credentials FILE (JSON with client_id, client_secret)",
    );
  }
  const c = parseJson(fs.readFileSync(file, "utf8"), CredentialsFile, `${file} (needs client_id and client_secret)`);
  return { clientId: c.client_id, clientSecret: c.client_secret };
}

export function submitCommand(): Command {
  return new Command("submit")
    .description("submit a file to a sori server; with --wait, wait for the result and print it")
    .argument("<file>", "audio file (mp4, m4a, mp3, amr, flac, wav)")
    .option("--url <url>", "the server", "http://127.0.0.1:8000")
    .option("--credentials <file>", "JSON file with client_id and client_secret (default: the local demo client)")
    .option("--client-id <id>", "client id (instead of a credentials file)")
    .option("--client-secret <secret>", "client secret (instead of a credentials file)")
    .option("--config <json>", "the config object, as for POST /v1/transcribe", "{}")
    .option("--wait", "wait until the job is final and print the result", false)
    .addOption(
      new Option("--format <format>", "with --wait: what to print")
        .choices(["json", "srt", "vtt", "txt"])
        .default("json"),
    )
    .option("--poll-ms <ms>", "polling interval while waiting", positive, 5000)
    .action(async (file: string, o: SubmitOptions) => {
      const config: TranscribeConfig = parseJson(o.config, ConfigObject, "--config");
      if (!fs.existsSync(file)) throw new Error(`no such file: ${file}`);
      const client = new SoriClient({ baseUrl: o.url, ...credentials(o), pollIntervalMs: o.pollMs });
      try {
        const id = await client.submit(path.resolve(file), config);
        if (!o.wait) {
          process.stdout.write(`${id}\n`);
          return;
        }
        if (process.stderr.isTTY) process.stderr.write(`job ${id} submitted; waiting for it...\n`);
        const result = await client.wait(id);
        if (result.status === "failed" || o.format === "json") {
          process.stdout.write(JSON.stringify(result, null, 2) + "\n");
          if (result.status === "failed") process.exitCode = 1;
          return;
        }
        process.stdout.write(await client.export(id, o.format));
      } catch (err) {
        if (err instanceof SoriError) throw new Error(`server answered ${err.message}`);
        throw err;
      }
    });
}
