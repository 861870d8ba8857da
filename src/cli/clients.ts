// `sori clients create|list|update|demo`: manage API clients directly in the store.
import fs from "node:fs";
import path from "node:path";
import { Command, InvalidArgumentError, Option } from "commander";
import { hashSecret, newClientId, newClientSecret } from "../auth/secrets.js";
import { loadConfig } from "../config.js";
import { type ClientUpdate, insertClient, listClients, updateClient } from "../storage/clients.js";
import { openStore, type Store } from "../storage/db.js";

const num = (v: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError("must be a number >= 0");
  return n;
};

interface LimitOptions {
  tier?: "standard" | "enterprise";
  maxConcurrent?: number;
  quotaHours?: number;
  readRps?: number;
}

const limitOptions = (cmd: Command): Command =>
  cmd
    .addOption(new Option("--tier <tier>", "license tier").choices(["standard", "enterprise"]))
    .option(
      "--max-concurrent <n>",
      "jobs in progress at once, and streaming sessions open at once (429 A0002 beyond)",
      num,
    )
    .option(
      "--quota-hours <h>",
      "audio hours per quota window, files and streams (429 A0001 beyond; 0 = unlimited)",
      num,
    )
    .option("--read-rps <r>", "reads per second (429 A0003 beyond)", num);

async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadConfig());
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export async function createClient(
  store: Store,
  name: string,
  o: LimitOptions,
): Promise<{ client_id: string; client_secret: string }> {
  const client_id = newClientId();
  const client_secret = newClientSecret();
  await insertClient(store, {
    id: client_id,
    name,
    secret_hash: await hashSecret(client_secret),
    tier: o.tier ?? "standard",
    max_concurrent: o.maxConcurrent ?? null,
    quota_s: o.quotaHours === undefined ? null : o.quotaHours * 3600,
    read_rps: o.readRps ?? null,
  });
  return { client_id, client_secret };
}

export function clientsCommand(): Command {
  const cmd = new Command("clients").description("manage API clients");

  limitOptions(cmd.command("create").description("create a client and print its credentials (shown once)"))
    .requiredOption("--name <name>", "a label for the client")
    .option("--json", "print {client_id, client_secret} as JSON")
    .action(async (o: LimitOptions & { name: string; json?: boolean }) => {
      const creds = await withStore((s) => createClient(s, o.name, o));
      if (o.json) process.stdout.write(JSON.stringify(creds) + "\n");
      else process.stdout.write(`client_id:     ${creds.client_id}\nclient_secret: ${creds.client_secret}\n`);
    });

  cmd
    .command("list")
    .description("list clients (never their secrets)")
    .option("--json", "print JSON lines")
    .action(async (o: { json?: boolean }) => {
      const rows = await withStore((s) => listClients(s));
      for (const c of rows) {
        const view = {
          client_id: c.id,
          name: c.name,
          tier: c.tier,
          max_concurrent: c.max_concurrent,
          quota_s: c.quota_s,
          read_rps: c.read_rps,
          disabled: !!c.disabled,
        };
        process.stdout.write((o.json ? JSON.stringify(view) : Object.values(view).join("\t")) + "\n");
      }
    });

  limitOptions(cmd.command("update").description("change a client's tier or limits").argument("<client_id>"))
    .option("--disable", "refuse its tokens and logins")
    .option("--enable", "allow it again")
    .action(async (id: string, o: LimitOptions & { disable?: boolean; enable?: boolean }) => {
      const patch: ClientUpdate = {};
      if (o.tier) patch.tier = o.tier;
      if (o.maxConcurrent !== undefined) patch.max_concurrent = o.maxConcurrent;
      if (o.quotaHours !== undefined) patch.quota_s = o.quotaHours * 3600;
      if (o.readRps !== undefined) patch.read_rps = o.readRps;
      if (o.disable) patch.disabled = 1;
      if (o.enable) patch.disabled = 0;
      if (!(await withStore((s) => updateClient(s, id, patch)))) throw new Error(`no client ${id}`);
    });

  cmd
    .command("demo")
    .description("create the demo client once (credentials kept in the data dir, mode 0600) and print them")
    .action(async () => {
      const config = loadConfig();
      const file = path.join(config.dataDir, "demo-client.json");
      if (!fs.existsSync(file)) {
        const creds = await withStore((s) => createClient(s, "demo", { tier: "enterprise" }));
        fs.mkdirSync(config.dataDir, { recursive: true });
        fs.writeFileSync(file, JSON.stringify(creds) + "\n", { mode: 0o600 });
      }
      process.stdout.write(fs.readFileSync(file, "utf8"));
    });

  return cmd;
}
