// Network namespaces as separate "hosts" for multi-host tests: each namespace gets a veth link to a bridge in the
// root namespace, all on one private /24; the root namespace holds the bridge address (where PostgreSQL listens).
// The filesystem stays shared, which is the "shared mount" deployment for audio blobs. Needs root and iproute2.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { type SoriProcess, startSori } from "./server.js";

export interface NetHost {
  /** Namespace name, as `ip netns` knows it. */
  ns: string;
  /** The namespace's address on the lab network. */
  addr: string;
  /** The root namespace's end of its veth link (a port of the lab bridge): where cutLink cuts it. */
  link: string;
}

export interface NetLab {
  /** The root namespace's address on the lab network (the bridge). */
  hostAddr: string;
  hosts: Record<string, NetHost>;
  /** Kills every process left in the namespaces, deletes them and the bridge. Safe to call twice. */
  destroy(): void;
}

const ip = (...args: string[]): { ok: boolean; out: string } => {
  const r = spawnSync("ip", args, { encoding: "utf8" });
  return { ok: r.status === 0, out: `${r.stdout ?? ""}${r.stderr ?? ""}` };
};
const must = (...args: string[]): string => {
  const r = ip(...args);
  if (!r.ok) throw new Error(`ip ${args.join(" ")} failed: ${r.out}`);
  return r.out;
};

/** Why namespaces cannot be made here, or null when they can. */
export function netnsUnavailable(): string | null {
  if (process.getuid?.() !== 0) return "needs root to create network namespaces";
  const v = spawnSync("ip", ["-V"], { encoding: "utf8" });
  if (v.error || v.status !== 0) return "the `ip` command (iproute2) is missing";
  const probe = `sori-probe-${process.pid}`;
  const r = ip("netns", "add", probe);
  ip("netns", "del", probe);
  return r.ok ? null : `cannot create a network namespace: ${r.out.trim()}`;
}

/** A /24 under 10.213.0.0/16 that no interface here uses yet (several test runs may share the machine). */
function freeSubnet(): string {
  const used = ip("-4", "-o", "addr").out;
  for (let i = 0; i < 50; i++) {
    const third = 1 + Math.floor(Math.random() * 254);
    if (!used.includes(`10.213.${third}.`)) return `10.213.${third}`;
  }
  throw new Error("no free 10.213.x.0/24 subnet");
}

/** Creates one namespace per role (e.g. api, w1, w2), each linked to a fresh bridge. */
export function createNetLab(roles: string[]): NetLab {
  const tag = randomBytes(2).toString("hex");
  const net = freeSubnet();
  const bridge = `sbr${tag}`; // interface names are limited to 15 characters
  const hosts: Record<string, NetHost> = {};
  let destroyed = false;
  const destroy = (): void => {
    if (destroyed) return;
    destroyed = true;
    for (const { ns } of Object.values(hosts)) {
      for (const pid of ip("netns", "pids", ns)
        .out.split(/\s+/)
        .filter((p) => /^\d+$/.test(p))) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // already gone
        }
      }
      ip("netns", "del", ns); // also deletes the veth pair
    }
    ip("link", "del", bridge);
  };
  process.once("exit", destroy); // last resort if the test process dies before its cleanup hook
  try {
    must("link", "add", bridge, "type", "bridge");
    must("addr", "add", `${net}.1/24`, "dev", bridge);
    must("link", "set", bridge, "up");
    roles.forEach((role, i) => {
      const ns = `sori-${role}-${process.pid}-${tag}`;
      const outer = `sv${tag}${i}`;
      const inner = `sn${tag}${i}`;
      const addr = `${net}.${i + 2}`;
      must("netns", "add", ns);
      hosts[role] = { ns, addr, link: outer };
      must("link", "add", outer, "type", "veth", "peer", "name", inner);
      must("link", "set", outer, "master", bridge);
      must("link", "set", outer, "up");
      must("link", "set", inner, "netns", ns);
      must("-n", ns, "addr", "add", `${addr}/24`, "dev", inner);
      must("-n", ns, "link", "set", inner, "up");
      must("-n", ns, "link", "set", "lo", "up");
    });
  } catch (e) {
    destroy();
    throw e;
  }
  return { hostAddr: `${net}.1`, hosts, destroy };
}

/** `sori <command>` inside a namespace (test/helpers/server.ts's startSori). */
export function startSoriIn(
  ns: string,
  command: "serve" | "worker",
  env: NodeJS.ProcessEnv,
  args: string[] = [],
): Promise<SoriProcess> {
  return startSori(command, env, args, { netns: ns });
}

/**
 * How a host's link is cut. `down`: its cable is pulled (the bridge end of its veth goes down; the host sees no
 * carrier): new connections fail within seconds (EHOSTUNREACH), open ones stall. `drop`: the switch drops its frames
 * (the bridge port is disabled; both ends stay up), as a firewall DROP rule would: nothing fails, everything stalls
 * until TCP gives up. Either way open TCP connections resume when the link is restored.
 */
export type LinkCut = "down" | "drop";

/** Cuts a host off the lab network (and so from everything on it) until restoreLink. */
export function cutLink(host: NetHost, how: LinkCut): void {
  if (how === "down") must("link", "set", host.link, "down");
  else bridgePortState(host.link, "0"); // disabled
}

export function restoreLink(host: NetHost, how: LinkCut): void {
  if (how === "down") must("link", "set", host.link, "up");
  else bridgePortState(host.link, "3"); // forwarding
}

function bridgePortState(link: string, state: string): void {
  const r = spawnSync("bridge", ["link", "set", "dev", link, "state", state], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`bridge link set dev ${link} state ${state} failed: ${r.stderr}`);
}

/**
 * Kills the root namespace's TCP connections from local `port` to `host` (`ss -K`): the server's end forgets them, as
 * when the server's host restarts or its address fails over. With the host's link cut, the reset never reaches the
 * client, which is then left waiting on a connection that no longer exists. Returns how many were killed.
 */
export function forgetConnections(host: NetHost, port: number): number {
  const filter = ["dst", host.addr, "sport", "=", `:${port}`];
  const listed = spawnSync("ss", ["-Htn", ...filter], { encoding: "utf8" }).stdout.trim();
  const r = spawnSync("ss", ["-K", "-Htn", ...filter], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`ss -K failed: ${r.stderr}`);
  const left = spawnSync("ss", ["-Htn", ...filter], { encoding: "utf8" }).stdout.trim();
  const count = (s: string) => (s ? s.split("\n").length : 0);
  return count(listed) - count(left);
}
