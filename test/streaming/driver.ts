// Runs a Python driver of a public RTZR client (.venv-stream) and collects the JSON lines it prints, one per event;
// rejects with the tail of its stderr when it exits other than 0.
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { ROOT } from "../helpers/server.js";

export const STREAM_PYTHON = path.join(ROOT, ".venv-stream", "bin", "python");

export function runDriver<T>(script: string, args: string[], creds: { id: string; secret: string }): Promise<T[]> {
  const child = spawn(STREAM_PYTHON, [path.join(ROOT, "test", "streaming", script), ...args], {
    env: { ...process.env, RTZR_CLIENT_ID: creds.id, RTZR_CLIENT_SECRET: creds.secret },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: T[] = [];
  const stderr: string[] = [];
  readline.createInterface({ input: child.stderr }).on("line", (l) => stderr.push(l));
  readline.createInterface({ input: child.stdout }).on("line", (l) => lines.push(JSON.parse(l) as T));
  return new Promise<T[]>((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0
        ? resolve(lines)
        : reject(
            new Error(`${script} exited ${code}: ${JSON.stringify(lines.at(-1))}\n${stderr.slice(-30).join("\n")}`),
          ),
    ),
  );
}
