// A store connection that died while its host was cut off must fail its query, neither hang nor crash the process.
// A process in a network namespace (test/helpers/netns.ts) opens the PostgreSQL store as `sori` does and sends a
// query; its link is cut (frames dropped), the server's end of the connection is killed meanwhile (as when the
// store's host restarts or fails over: the reset is lost on the cut link), and the link comes back. With nothing
// left to send, the client used to wait for an answer forever (no TCP keepalive): a worker stuck so in a checkpoint
// write kept renewing its lease on other connections, and its job stayed `transcribing`. And when the reset did
// arrive, the pooled client's 'error' event had no listener and took the whole process down.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { after, before, describe, it } from "node:test";
import {
  createNetLab,
  cutLink,
  forgetConnections,
  type NetLab,
  netnsUnavailable,
  restoreLink,
} from "../helpers/netns.js";
import { type PgCluster, pgClusterUnavailable, startPgCluster } from "../helpers/pgCluster.js";
import { ROOT } from "../helpers/server.js";

// The store's keepalive (src/storage/db.ts, PG_LIVENESS) finds a dead connection in about 20 s.
const SETTLE_MS = 60_000;

describe(
  "a store connection lost behind a cut link",
  { skip: netnsUnavailable() ?? pgClusterUnavailable() ?? false, timeout: 120_000 },
  () => {
    let lab: NetLab;
    let cluster: PgCluster;
    before(async () => {
      lab = createNetLab(["client"]);
      cluster = await startPgCluster({ listen: [lab.hostAddr] });
    });
    after(() => {
      lab?.destroy();
      cluster?.destroy();
    });

    it("fails the query in bounded time instead of waiting forever", async () => {
      const host = lab.hosts.client!;
      const db = await cluster.createDatabase();
      const child = spawn(
        "ip",
        [
          "netns",
          "exec",
          host.ns,
          process.execPath,
          "--import",
          "tsx",
          path.join(ROOT, "test/helpers/storeQuery.ts"),
          cluster.url(db, lab.hostAddr),
          "5",
        ],
        { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
      );
      const events: { event: string; ok?: boolean; ms?: number; err?: string }[] = [];
      let onEvent = (): void => {};
      readline.createInterface({ input: child.stdout! }).on("line", (line) => {
        if (line.startsWith("{")) events.push(JSON.parse(line));
        onEvent();
      });
      const waitFor = (name: string, ms: number) =>
        new Promise<(typeof events)[number] | undefined>((resolve) => {
          const t = setTimeout(() => resolve(undefined), ms);
          onEvent = () => {
            const e = events.find((x) => x.event === name);
            if (e) {
              clearTimeout(t);
              resolve(e);
            }
          };
          onEvent();
        });
      try {
        assert.ok(await waitFor("ready", 60_000), "the store opened");
        await new Promise((r) => setTimeout(r, 1000)); // the query is sent and acknowledged
        cutLink(host, "drop");
        const killed = forgetConnections(host, cluster.port);
        assert.ok(killed > 0, "the server's end of the query's connection was killed");
        await new Promise((r) => setTimeout(r, 2000));
        restoreLink(host, "drop");
        const settled = await waitFor("settled", SETTLE_MS);
        assert.ok(settled, `the query neither returned nor failed within ${SETTLE_MS / 1000} s of the cut`);
        assert.equal(settled.ok, false, "a query whose connection was killed cannot have succeeded");
      } finally {
        child.kill("SIGKILL");
      }
    });
  },
);
