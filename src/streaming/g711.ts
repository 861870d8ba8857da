// G.711 mu-law and A-law to 16-bit linear PCM (ITU-T G.711), for the MULAW and ALAW encodings: telephone
// audio arrives in these as often as in LINEAR16. A byte is one sample; two 256-entry tables do the work.

function muLaw(byte: number): number {
  const u = ~byte & 0xff;
  const t = (((u & 0x0f) << 3) + 0x84) << ((u & 0x70) >> 4);
  return u & 0x80 ? 0x84 - t : t - 0x84;
}

function aLaw(byte: number): number {
  const a = byte ^ 0x55;
  const seg = (a & 0x70) >> 4;
  let t = (a & 0x0f) << 4;
  t = seg === 0 ? t + 8 : seg === 1 ? t + 0x108 : (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

const MU = Int16Array.from({ length: 256 }, (_, i) => muLaw(i));
const A = Int16Array.from({ length: 256 }, (_, i) => aLaw(i));

/** 8-bit companded samples → s16le bytes. */
export function expandG711(data: Uint8Array, law: "MULAW" | "ALAW"): Buffer {
  const table = law === "MULAW" ? MU : A;
  const out = Buffer.alloc(data.length * 2);
  for (let i = 0; i < data.length; i++) out.writeInt16LE(table[data[i] ?? 0] ?? 0, i * 2);
  return out;
}
