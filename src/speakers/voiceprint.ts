// Voiceprints as plain vectors: the cosine that matching compares, and the speech-weighted mean that adding audio
// to a speaker makes.

export interface Voiceprint {
  /** The engine's embedding model and recipe: prints of different models are never compared. */
  model: string;
  /** Unit-norm. */
  embedding: number[];
  /** Unit-norm: the same speech as a phone line passes it, what phone calls are compared with; null when unknown. */
  embeddingPhone: number[] | null;
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

/** Two prints of one voice as one: the mean of the two embeddings weighted by their speech, unit-norm; the phone
 * print likewise when both have one (else none: a print of part of the speech would not be the voice's). */
export function mergePrints(a: Voiceprint, b: Voiceprint): Voiceprint {
  if (a.model !== b.model) throw new Error("voiceprints of different models cannot be merged");
  const mean = (x: readonly number[], y: readonly number[]): number[] => {
    const sum = x.map((v, i) => v * a.speechS + y[i]! * b.speechS);
    const norm = Math.hypot(...sum) || 1;
    return sum.map((v) => v / norm);
  };
  return {
    model: a.model,
    embedding: mean(a.embedding, b.embedding),
    embeddingPhone: a.embeddingPhone && b.embeddingPhone ? mean(a.embeddingPhone, b.embeddingPhone) : null,
    speechS: a.speechS + b.speechS,
  };
}
