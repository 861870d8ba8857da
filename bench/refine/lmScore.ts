// A language model's log-likelihood of candidate texts after a shared context, for N-best rescoring (nbest.ts).
// node-llama-cpp 3.21 has no "score these tokens" call; `controlledEvaluate` returns, for a token, the probabilities
// of the next token, so each candidate's tokens are fed after the context and each next token's probability is read
// from the previous position's list. The list is cut to the top `topK` tokens (a full 151k-entry list costs about
// 3x the CPU); a token outside it counts as the smallest probability listed, an upper bound of its true value.
// The context is evaluated once; each candidate is erased again after it is scored.
import type { LlamaContextSequence, LlamaModel, Token } from "node-llama-cpp";

export interface LmScoreOptions {
  topK: number;
}

/** Mean log-probability of each token's successor, from the probability lists of the positions before it. */
export function meanNextTokenLogProb(
  tokens: readonly Token[],
  lists: readonly (ReadonlyMap<Token, number> | undefined)[],
): number | null {
  let sum = 0;
  let n = 0;
  for (let i = 0; i + 1 < tokens.length; i++) {
    const list = lists[i];
    if (!list || list.size === 0) continue;
    let p = list.get(tokens[i + 1]!);
    if (p === undefined) p = Math.min(...list.values());
    sum += Math.log(Math.max(p, 1e-12));
    n++;
  }
  return n > 0 ? sum / n : null;
}

/**
 * Mean token log-probability of each text after `context` (the text and a closing newline are scored, so a text
 * that stops mid-sentence is penalised by the newline's probability). The sequence's history is cleared first.
 */
export async function lmScores(
  model: LlamaModel,
  sequence: LlamaContextSequence,
  context: string,
  texts: readonly string[],
  o: LmScoreOptions = { topK: 40 },
): Promise<(number | null)[]> {
  await sequence.clearHistory();
  const prefix = model.tokenize(context);
  if (prefix.length === 0) throw new Error("the LM context must not be empty");
  // Everything but the context's last token is evaluated once; the last one predicts each text's first token.
  await sequence.evaluateWithoutGeneratingNewTokens(prefix.slice(0, -1));
  const kept = sequence.nextTokenIndex;
  const options = { temperature: 1, topK: o.topK, topP: 1, minP: 0 };
  const out: (number | null)[] = [];
  for (const text of texts) {
    const tokens = [prefix.at(-1)!, ...model.tokenize(`${text.trim()}\n`)];
    const input = tokens.map((t, i) =>
      i + 1 < tokens.length ? ([t, { generateNext: { probabilities: true, options } }] as const) : t,
    );
    const result = await sequence.controlledEvaluate(input as Parameters<typeof sequence.controlledEvaluate>[0]);
    out.push(
      meanNextTokenLogProb(
        tokens,
        result.map((r) => r?.next.probabilities),
      ),
    );
    await sequence.eraseContextTokenRanges([{ start: kept, end: sequence.nextTokenIndex }]);
  }
  return out;
}
