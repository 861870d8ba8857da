// Voiceprints as plain vectors: the cosine that matching compares, and the speech-weighted mean that adding audio
// to a speaker makes.

export interface Voiceprint {
  /** The engine's embedding model and recipe: prints of different models are never compared. */
  model: string;
  /** Unit-norm. */
  embedding: number[];
  speechS: number;
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Two prints of one voice as one: the mean of the two embeddings weighted by their speech, unit-norm. */
export function mergePrints(a: Voiceprint, b: Voiceprint): Voiceprint {
  if (a.model !== b.model) throw new Error("voiceprints of different models cannot be merged");
  const sum = a.embedding.map((x, i) => x * a.speechS + b.embedding[i]! * b.speechS);
  const norm = Math.hypot(...sum) || 1;
  return { model: a.model, embedding: sum.map((x) => x / norm), speechS: a.speechS + b.speechS };
}
