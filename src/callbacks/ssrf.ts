// The SSRF guard of callbacks: a callback may go to public http(s) addresses only, unless the admin allows private
// ones (SORI_CALLBACK_ALLOW_PRIVATE). Checked twice: at submit for what the URL itself says (scheme, an address
// literal, localhost), and at delivery on every address the name resolves to, at connect time, so a name that
// resolves to a private address (or is re-pointed later, DNS rebinding) is refused too.
import { BlockList, isIP } from "node:net";
import { InvalidInput } from "../domain/errors.js";

const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata lives here)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // NAT64 (reaches IPv4 addresses, private ones included)
  ["64:ff9b:1::", 48], // local-use NAT64
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds IPv4 addresses)
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  blocked.addSubnet(net, prefix, "ipv6");
}

/** True for loopback, private, link-local and other addresses that are not public unicast. */
export function isPrivateAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, "");
  const family = isIP(ip);
  if (family === 4) return blocked.check(ip, "ipv4");
  if (family !== 6) return true; // not an address: refuse rather than guess
  // IPv4-mapped and IPv4-compatible forms (::ffff:127.0.0.1, ::ffff:7f00:1) are the IPv4 address.
  const mapped = /^(?:0{0,4}:){0,5}(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/i.exec(ip) ?? null;
  if (mapped) return blocked.check(mapped[1]!, "ipv4");
  const hexMapped = /^(?:0{0,4}:){0,5}ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (hexMapped) {
    const hi = parseInt(hexMapped[1]!, 16);
    const lo = parseInt(hexMapped[2]!, 16);
    return blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, "ipv4");
  }
  return blocked.check(ip, "ipv6");
}

export const MAX_CALLBACK_URL = 2048;

/** Submit-time check of a callback_url: 400 H0001 unless http(s) and, without the admin switch, not a private
 * address or localhost as written. (Names are resolved, and checked again, only when the callback is sent.) */
export function checkCallbackUrl(value: string | undefined, allowPrivate: boolean): void {
  if (value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidInput("config.callback_url: is not a URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidInput("config.callback_url: must be an http or https URL");
  if (allowPrivate) return;
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || (isIP(host) && isPrivateAddress(host))) {
    throw new InvalidInput("config.callback_url: loopback and private addresses are not allowed on this server");
  }
}
