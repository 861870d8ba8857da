// `make test-image` (not part of `make test`): the built image run as a user would run it, with podman.
// 1. One container (read-only root, /data and /tmp volumes): start to /readyz, a client made with `sori clients
//    create` inside it, the shared 69 s Korean dialogue transcribed with use_diarization through the published port,
//    then the container restarted on the same volume and the job read again with the token issued before; a 20 MB
//    upload with a bad token from a client that writes its whole body first (urllib) reads its 401 through the port.
// 2. compose.yaml's scale-out profile under podman-compose: PostgreSQL, two API containers, two worker containers;
//    20 jobs sent alternately to both APIs, the worker holding the long one killed with SIGKILL after its first
//    checkpoint; every job completes once and the long one resumes; `down` then `up` keeps every result.
// 3. Every image that exists (sori:latest, sori:enterprise, sori:cuda): no layer holds a secret, none runs as root.
// Settings: PODMAN (the podman command line, as the Makefile's), ULIMITS, BUILD_CA, SORI_IMAGE, SORI_POSTGRES_IMAGE, COMPOSE.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { authenticate, read, submit, waitFinal } from "../helpers/api.js";
import { joinClips } from "../helpers/joinClips.js";
import { ROOT, TESTDATA } from "../helpers/server.js";
import { MB, writeFirst } from "../helpers/writeFirst.js";

const PODMAN = (process.env.PODMAN ?? "podman --runtime runc --cgroup-manager cgroupfs").split(" ");
const ULIMITS = (process.env.ULIMITS ?? "--ulimit nofile=1024:1024 --ulimit nproc=4096:4096").split(" ");
const IMAGE = process.env.SORI_IMAGE ?? "sori:latest";
const PG_IMAGE = process.env.SORI_POSTGRES_IMAGE ?? "localhost/sori-postgres:15";
const COMPOSE = process.env.COMPOSE ?? path.join(ROOT, ".venv-compose/bin/podman-compose");
const DIALOGUE = path.join(TESTDATA, "multi/deeply_ko_dialogue_constructed.wav"); // 69 s, two speakers
const SHORT = fs
  .readdirSync(path.join(TESTDATA, "ko"))
  .filter((f) => f.startsWith("deeply_") && f.endsWith(".wav"))
  .sort()
  .map((f) => path.join(TESTDATA, "ko", f));
// 131 s in three 60 s engine windows (SORI_ENGINE_WINDOW_S below), as test/e2e/resume.test.ts.
const LONG_CLIPS = ["en/earnings22_1_4482311_3_62.wav", "en/earnings22_3_4483589_261_321.wav", "en/whisper_jfk.flac"];
const KO = { model_name: "sommers", language: "ko" };

function sh(cmd: string[], opts: { env?: NodeJS.ProcessEnv; check?: boolean } = {}): string {
  const [bin, ...args] = cmd as [string, ...string[]];
  const r = spawnSync(bin, args, { encoding: "utf8", env: { ...process.env, ...opts.env }, maxBuffer: 1 << 28 });
  if ((opts.check ?? true) && r.status !== 0)
    throw new Error(`${cmd.join(" ")} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}
const podman = (...args: string[]): string => sh([...PODMAN, ...args]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const report = (what: string, value: unknown) => process.stdout.write(`figure: ${what}: ${JSON.stringify(value)}\n`);

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve(probe()).catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(250);
  }
}
const ready = (url: string) =>
  until(`${url}/readyz`, async () => ((await fetch(`${url}/readyz`)).ok ? true : undefined), 300_000);

/** Peak RSS (VmHWM) in MiB of each process in a container, by command. */
function peakRss(container: string): Record<string, number> {
  const out = podman(
    "exec",
    container,
    "sh",
    "-c",
    'for p in /proc/[0-9]*; do n=$(tr "\\0" " " < $p/cmdline | cut -c1-60); h=$(grep VmHWM $p/status 2>/dev/null | tr -s " " | cut -d" " -f2); [ -n "$h" ] && echo "$h $n"; done',
  );
  const rss: Record<string, number> = {};
  for (const line of out.trim().split("\n")) {
    const [kb, ...name] = line.split(" ");
    const cmd = name.join(" ");
    if (/node|python/.test(cmd)) rss[cmd.trim()] = Math.round(Number(kb) / 1024);
  }
  return rss;
}

/** The users of every process in a container (podman top reads them from the container's /proc). */
function processUsers(container: string): string[] {
  return podman("top", container, "user", "args")
    .trim()
    .split("\n")
    .slice(1)
    .map((l) => l.trim().split(/\s+/)[0] as string);
}

describe("the single container", () => {
  const name = `sori-image-test-${process.pid}`;
  const volume = `${name}-data`;
  const port = 18000 + (process.pid % 1000);
  const url = `http://127.0.0.1:${port}`;
  let creds: { client_id: string; client_secret: string };
  let token: string;
  let jobId: string;
  let first: unknown;

  const run = () => {
    const t0 = Date.now();
    podman(
      "run",
      "-d",
      "--name",
      name,
      ...ULIMITS,
      "--read-only",
      "--tmpfs",
      "/tmp",
      "-v",
      `${volume}:/data`,
      "-p",
      `127.0.0.1:${port}:8000`,
      IMAGE,
    );
    return t0;
  };

  after(() => {
    if (process.env.KEEP) return;
    sh([...PODMAN, "rm", "-f", name], { check: false });
    sh([...PODMAN, "volume", "rm", "-f", volume], { check: false });
  });

  it("starts read-only as a non-root user and becomes ready", async () => {
    const t0 = run();
    await ready(url);
    report("single container: start to /readyz (s)", (Date.now() - t0) / 1000);
    assert.deepEqual([...new Set(processUsers(name))], ["sori"]);
    podman("healthcheck", "run", name); // the image's HEALTHCHECK, run once by hand (no systemd timer here)
    assert.equal(
      podman("exec", name, "stat", "-c", "%U %a", "/data/jwt.key", "/data/callback.key"),
      "sori 600\nsori 600\n",
    );
  });

  it("answers a refused 20 MB upload to a client that writes its whole body first (urllib), three times", () => {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(writeFirst(url, 20 * MB), {
        status: 401,
        body: { code: "H0002", msg: "invalid or expired token" },
      });
    }
  });

  it("creates a client inside the container and transcribes the dialogue with diarization", async () => {
    creds = JSON.parse(podman("exec", name, "sori", "clients", "create", "--name", "image-test", "--json"));
    token = await authenticate(url, creds.client_id, creds.client_secret);
    const t0 = Date.now();
    const r = await submit(url, token, DIALOGUE, { ...KO, use_diarization: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    jobId = r.body.id as string;
    first = await waitFinal(url, token, jobId, 900_000);
    report(
      "single container: first job, 69 s dialogue with diarization, submit to final (s)",
      (Date.now() - t0) / 1000,
    );
    report("single container: peak RSS after the first job (MiB)", peakRss(name));
    const body = first as { status: string; results: { utterances: { msg: string; spk: number }[] } };
    assert.equal(body.status, "completed", JSON.stringify(body));
    const u = body.results.utterances;
    assert.ok(u.length >= 5, `only ${u.length} utterances`);
    assert.ok(u.map((x) => x.msg).join("").length > 100, "too little text");
    assert.ok(new Set(u.map((x) => x.spk)).size >= 2, "diarization found one speaker");
    report("single container: utterances, speakers", [u.length, new Set(u.map((x) => x.spk)).size]);
  });

  it("restarts on the same volume: the same keys, the same result", async () => {
    const t0 = Date.now();
    podman("restart", "--time", "20", name);
    await ready(url);
    report("single container: restart to /readyz (s)", (Date.now() - t0) / 1000);
    // The token issued before the restart still verifies: jwt.key was kept in /data, not made again.
    const again = await read(url, token, jobId);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first);
  });
});

describe("the compose scale-out profile", () => {
  const project = `sori-image-test-${process.pid}`;
  const ports = [18001 + (process.pid % 1000) * 2, 18002 + (process.pid % 1000) * 2];
  const urls = ports.map((p) => `http://127.0.0.1:${p}`);
  const env: NodeJS.ProcessEnv = {
    SORI_IMAGE: IMAGE,
    SORI_POSTGRES_IMAGE: PG_IMAGE,
    SORI_PG_PASSWORD: randomBytes(18).toString("base64url"),
    SORI_API1_PORT: String(ports[0]),
    SORI_API2_PORT: String(ports[1]),
    SORI_LEASE_S: "10",
    SORI_ENGINE_WINDOW_S: "60",
  };
  const compose = (...args: string[]) =>
    sh(
      [
        COMPOSE,
        "-f",
        path.join(ROOT, "compose.yaml"),
        "-p",
        project,
        "--podman-args",
        PODMAN.slice(1).join(" "),
        "--podman-run-args",
        ULIMITS.join(" "),
        "--profile",
        "scaleout",
        ...args,
      ],
      { env },
    );
  const container = (service: string) => `${project}_${service}_1`;
  const psql = (query: string): string[][] =>
    podman("exec", container("postgres"), "psql", "-U", "sori", "-d", "sori", "-tA", "-F", "\t", "-c", query)
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split("\t"));
  const longWav = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sori-image-")), "long.wav");
  let creds: { client_id: string; client_secret: string };
  const jobs: { id: string; api: number }[] = [];
  const results = new Map<string, unknown>();

  const up = async () => {
    compose("up", "-d");
    await Promise.all(urls.map(ready));
    // The workers' /readyz (their engines loaded), through the image's HEALTHCHECK.
    await until(
      "both workers ready",
      () =>
        ["worker-1", "worker-2"].every(
          (w) => spawnSync(PODMAN[0] as string, [...PODMAN.slice(1), "healthcheck", "run", container(w)]).status === 0,
        ) || undefined,
      300_000,
    );
  };

  before(() => joinClips(longWav, LONG_CLIPS));
  after(() => {
    if (process.env.KEEP) return;
    sh([COMPOSE, "-f", path.join(ROOT, "compose.yaml"), "-p", project, "--profile", "scaleout", "down", "-v"], {
      env,
      check: false,
    });
  });

  it("comes up: PostgreSQL, two APIs, two workers, none of sori's processes as root", async () => {
    const t0 = Date.now();
    await up();
    report("scale-out: up to every /readyz (s)", (Date.now() - t0) / 1000);
    for (const s of ["api-1", "api-2", "worker-1", "worker-2"])
      assert.deepEqual([...new Set(processUsers(container(s)))], ["sori"], s);
    creds = JSON.parse(
      podman("exec", container("api-1"), "sori", "clients", "create", "--name", "image-test", "--json"),
    );
  });

  it("takes 20 jobs on both APIs; a worker killed with SIGKILL mid-job: every job completes once, the long one resumes", async () => {
    const tokens = await Promise.all(urls.map((u) => authenticate(u, creds.client_id, creds.client_secret)));
    const send = async (i: number, file: string, config: object) => {
      const api = i % 2;
      const r = await submit(urls[api] as string, tokens[api] as string, file, config);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      jobs.push({ id: r.body.id as string, api });
    };
    const t0 = Date.now();
    await send(0, longWav, { model_name: "whisper", language: "en" });
    const long = jobs[0]?.id as string;
    for (let i = 1; i < 20; i++) await send(i, SHORT[i % SHORT.length] as string, KO);

    // The worker that holds the long job, once its first window's checkpoint is stored.
    const holder = await until(
      "the long job's first checkpoint",
      () => {
        const [row] = psql(
          `SELECT t.locked_by, count(c.idx) FROM tasks t JOIN task_checkpoints c ON c.task_seq = t.seq WHERE t.job_id = '${long}' AND t.state = 'running' GROUP BY t.locked_by`,
        );
        return row && Number(row[1]) >= 1 ? (row[0] as string).split(":")[0] : undefined;
      },
      600_000,
    );
    const victim = ["worker-1", "worker-2"].find(
      (w) => podman("inspect", "-f", "{{.Config.Hostname}}", container(w)).trim() === holder,
    );
    assert.ok(victim, `no worker container has hostname ${holder}`);
    const survivor = victim === "worker-1" ? "worker-2" : "worker-1";
    podman("kill", "-s", "KILL", container(victim));
    report("scale-out: killed with SIGKILL during the long job", victim);

    for (const j of jobs) {
      const body = await waitFinal(urls[j.api] as string, tokens[j.api] as string, j.id, 900_000);
      assert.equal(body.status, "completed", JSON.stringify(body));
      assert.ok(body.results.utterances.length > 0, `${j.id}: no utterances`);
      results.set(j.id, body);
    }
    report("scale-out: first submit to the 20th job completed (s)", (Date.now() - t0) / 1000);
    // Once: one transcription task per job, completed; the long one took a second attempt, the others one.
    const tasks = psql("SELECT job_id, state, attempts FROM tasks WHERE kind = 'transcribe' ORDER BY seq");
    assert.equal(tasks.length, 20);
    for (const [id, state, attempts] of tasks) {
      assert.equal(state, "completed", id);
      assert.equal(Number(attempts), id === long ? 2 : 1, `${id}: ${attempts} attempts`);
    }
    assert.deepEqual(tasks.map((t) => t[0]).sort(), jobs.map((j) => j.id).sort());
    // The survivor (or the killed worker, back by its restart policy) resumed after the stored window.
    const logs = ["worker-1", "worker-2"].map((w) => sh([...PODMAN, "logs", container(w)], { check: false })).join("");
    const resumed = logs.split("\n").find((l) => l.includes('"resuming from checkpoint"'));
    assert.ok(resumed, "no worker resumed from a checkpoint");
    const { windows, offset_s } = JSON.parse(resumed) as { windows: number; offset_s: number };
    report("scale-out: resumed after windows, at offset (s)", [windows, offset_s]);
    report("scale-out: the long job resumed; survivor", survivor);
  });

  it("keeps every result through down and up", async () => {
    const t0 = Date.now();
    compose("down");
    await up();
    report("scale-out: down, up, every /readyz (s)", (Date.now() - t0) / 1000);
    const tokens = await Promise.all(urls.map((u) => authenticate(u, creds.client_id, creds.client_secret)));
    for (const j of jobs) {
      // Read from the other API than the one that took it.
      const other = 1 - j.api;
      const r = await read(urls[other] as string, tokens[other] as string, j.id);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, results.get(j.id));
    }
  });
});

describe("the images", () => {
  const images = ["sori:latest", "sori:enterprise", "sori:cuda"].filter(
    (i) => spawnSync(PODMAN[0] as string, [...PODMAN.slice(1), "image", "exists", i]).status === 0,
  );
  // Files that must never be in a layer: the build's CA secret and its mount point, keys and stores made at run time,
  // private keys, credentials of npm and pip; a CA added to the trust store. Debian's public CA list is expected.
  const SECRET =
    /(^|\/)(run\/secrets\/.|jwt\.key$|callback\.key$|sori\.db$|demo-client\.json$|id_(rsa|ecdsa|ed25519)$|\.npmrc$|pip\.conf$|usr\/local\/share\/ca-certificates\/.)/;
  const PUBLIC_PEM = /^(etc\/ssl\/certs\/|usr\/share\/ca-certificates\/|usr\/share\/doc\/|usr\/lib\/ssl\/cert\.pem$)/;
  // The CA bundle handed to the build as a secret (the Makefile's BUILD_CA): no file in a layer may be a copy of it.
  const buildCa = process.env.BUILD_CA ?? "/etc/ssl/certs/ca-certificates.crt";
  const ca = fs.existsSync(buildCa) ? fs.readFileSync(buildCa) : undefined;
  const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

  for (const image of images) {
    it(`${image}: runs as 10001, and no layer holds a secret`, () => {
      const config = JSON.parse(podman("image", "inspect", image))[0].Config as { User: string; Env: string[] };
      assert.equal(config.User, "10001:10001");
      assert.ok(!config.Env.some((e) => /PASSWORD|SECRET|TOKEN|_KEY=/i.test(e)), config.Env.join(" "));
      const history = podman("history", "--no-trunc", "--format", "{{.CreatedBy}}", image);
      assert.doesNotMatch(history, /BEGIN [A-Z ]*PRIVATE KEY|SORI_PG_PASSWORD=|client_secret/);
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sori-layers-"));
      try {
        podman("save", "--format", "docker-dir", "-o", dir, image);
        const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
        const layers = (manifest.layers as { digest: string }[]).map((l) => l.digest.replace(/^sha256:/, ""));
        let files = 0;
        for (const layer of layers) {
          const tarball = path.join(dir, layer);
          // "-rw-r--r-- 0/0 1234 2026-11-28 10:00 ./path" (GNU tar, numeric owners)
          const entries = sh(["tar", "--numeric-owner", "-tvf", tarball])
            .split("\n")
            .filter(Boolean)
            .map((l) => /^(\S)\S*\s+\S+\s+(\d+)\s+\S+\s+\S+\s+(.*?)(?: -> .*)?$/.exec(l))
            .filter((m) => m !== null)
            .map((m) => ({
              type: m[1],
              size: Number(m[2]),
              member: m[3] as string,
              name: (m[3] as string).replace(/^\.\//, ""),
            }));
          files += entries.length;
          const bad = entries
            .map((e) => e.name)
            .filter((f) => SECRET.test(f) || (/\.(pem|key|p12)$/.test(f) && !PUBLIC_PEM.test(f)));
          assert.deepEqual(bad, [], `${image}: layer ${layer} holds ${bad.join(", ")}`);
          for (const e of entries) {
            if (!ca || e.type !== "-" || e.size !== ca.length) continue;
            const copy = spawnSync("tar", ["-xOf", tarball, e.member], { maxBuffer: 1 << 28 }).stdout;
            assert.notEqual(sha256(copy), sha256(ca), `${image}: ${e.name} in layer ${layer} is the build's CA secret`);
          }
        }
        report(`${image}: layers checked, files listed`, { layers: layers.length, files });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
