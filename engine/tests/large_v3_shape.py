"""A Whisper model with large-v3's shape and random weights, built with CTranslate2's model specs: no download.

large-v3 differs from base where code can assume base: 128 mel bins (preprocessor_config.json's feature_size), a
100th language token `<|yue|>` at id 50358 that moves every special token after it up by one (task tokens,
`<|notimestamps|>`, the first timestamp), and a vocabulary of 51,866. The tokenizer is base's with that token added
and the ids after it shifted, as large-v3's own tokenizer has them; the model's config (lang_ids, suppress_ids) is
shifted the same way, so the tokenizer and the model agree on every special token. Two layers of width 64 keep it
a few MB and quick on any CPU; its text is garbage, so a test asserts only what holds whatever the words.

`python engine/tests/large_v3_shape.py BASE_MODEL_DIR OUT_DIR [--width W --layers N]` writes the model directory (for
the TypeScript e2e; bench/engine_memory.py makes a larger one).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import ctranslate2
import numpy as np
import tokenizers
from ctranslate2.specs import common_spec, transformer_spec, whisper_spec

N_MELS = 128
YUE_ID = 50358  # large-v3's new language token: the 100th, after base's 99 (50259..50357)
VOCAB_SIZE = 51866
WIDTH = 64  # the test size; a larger one (`--width`, `--layers`) makes the weights big enough to see in memory
HEADS = 2
LAYERS = 2
ENCODER_POSITIONS = 1500  # 30 s of 10 ms frames after the stride-2 convolution
DECODER_POSITIONS = 448  # Whisper's text context


def _shifted(token_id: int) -> int:
    return token_id + 1 if token_id >= YUE_ID else token_id


def tokenizer_json(base: dict) -> dict:
    """Base's tokenizer.json with `<|yue|>` at YUE_ID and the special tokens after it one id up."""
    out = json.loads(json.dumps(base))
    added = [dict(t, id=_shifted(t["id"])) for t in out["added_tokens"]]
    yue = dict(next(t for t in added if t["content"] == "<|su|>"), id=YUE_ID, content="<|yue|>")
    out["added_tokens"] = sorted([*added, yue], key=lambda t: t["id"])
    for special in (out.get("post_processor") or {}).get("special_tokens", {}).values():
        special["ids"] = [_shifted(i) for i in special["ids"]]
    return out


def _random(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return (rng.standard_normal(shape) * 0.02).astype(np.float32)


def _linear(spec: common_spec.LinearSpec, rng: np.random.Generator, out: int, inp: int) -> None:
    spec.weight = _random(rng, out, inp)
    spec.bias = np.zeros(out, np.float32)


def _norm(spec: common_spec.LayerNormSpec, w: int) -> None:
    spec.gamma = np.ones(w, np.float32)
    spec.beta = np.zeros(w, np.float32)


def _ffn(spec: transformer_spec.FeedForwardSpec, rng: np.random.Generator, w: int) -> None:
    _norm(spec.layer_norm, w)
    _linear(spec.linear_0, rng, 4 * w, w)
    _linear(spec.linear_1, rng, w, 4 * w)


def spec(seed: int = 0, w: int = WIDTH, layers: int = LAYERS) -> whisper_spec.WhisperSpec:
    rng = np.random.default_rng(seed)
    s = whisper_spec.WhisperSpec(layers, HEADS, layers, HEADS)
    enc, dec = s.encoder, s.decoder
    enc.conv1.weight = _random(rng, w, N_MELS, 3)
    enc.conv1.bias = np.zeros(w, np.float32)
    enc.conv2.weight = _random(rng, w, w, 3)
    enc.conv2.bias = np.zeros(w, np.float32)
    enc.position_encodings.encodings = _random(rng, ENCODER_POSITIONS, w)
    _norm(enc.layer_norm, w)
    for layer in enc.layer:
        _norm(layer.self_attention.layer_norm, w)
        _linear(layer.self_attention.linear[0], rng, 3 * w, w)  # fused q, k, v
        _linear(layer.self_attention.linear[1], rng, w, w)
        _ffn(layer.ffn, rng, w)
    dec.embeddings.weight = _random(rng, VOCAB_SIZE, w)
    dec.projection.weight = dec.embeddings.weight  # tied, as Whisper's are: stored once
    dec.position_encodings.encodings = _random(rng, DECODER_POSITIONS, w)
    _norm(dec.layer_norm, w)
    for layer in dec.layer:
        _norm(layer.self_attention.layer_norm, w)
        _linear(layer.self_attention.linear[0], rng, 3 * w, w)
        _linear(layer.self_attention.linear[1], rng, w, w)
        _norm(layer.attention.layer_norm, w)
        _linear(layer.attention.linear[0], rng, w, w)  # query
        _linear(layer.attention.linear[1], rng, 2 * w, w)  # fused k, v of the encoder output
        _linear(layer.attention.linear[2], rng, w, w)
        _ffn(layer.ffn, rng, w)
    return s


def build(base_dir: Path, out_dir: Path, width: int = WIDTH, layers: int = LAYERS) -> Path:
    """The model directory `out_dir`, made from base's tokenizer and config (`base_dir`: models/whisper-base)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tok = tokenizer_json(json.loads((base_dir / "tokenizer.json").read_text(encoding="utf-8")))
    (out_dir / "tokenizer.json").write_text(json.dumps(tok, ensure_ascii=False), encoding="utf-8")
    hf = tokenizers.Tokenizer.from_file(str(out_dir / "tokenizer.json"))
    notimestamps = hf.token_to_id("<|notimestamps|>")
    vocabulary = [hf.id_to_token(i) for i in range(notimestamps + 1)]
    vocabulary += [f"<|{i * 0.02:.2f}|>" for i in range(VOCAB_SIZE - len(vocabulary))]
    base_config = json.loads((base_dir / "config.json").read_text(encoding="utf-8"))
    s = spec(0, width, layers)
    s.register_vocabulary(vocabulary)
    c = s.config
    c.lang_ids = list(range(base_config["lang_ids"][0], YUE_ID + 1))
    c.suppress_ids = [_shifted(i) for i in base_config["suppress_ids"]]
    c.suppress_ids_begin = [_shifted(i) for i in base_config["suppress_ids_begin"]]
    c.alignment_heads = [[layers - 1, h] for h in range(HEADS)]
    s.validate()
    s.optimize(quantization="float16")  # halves the file; CTranslate2 converts on load to the compute type asked
    s.save(str(out_dir))
    preprocessor = {"feature_size": N_MELS, "sampling_rate": 16000, "hop_length": 160, "chunk_length": 30, "n_fft": 400}
    (out_dir / "preprocessor_config.json").write_text(json.dumps(preprocessor), encoding="utf-8")
    return out_dir


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="large-v3's shape with random weights")
    ap.add_argument("base", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--width", type=int, default=WIDTH)
    ap.add_argument("--layers", type=int, default=LAYERS)
    args = ap.parse_args()
    built = build(args.base, args.out, args.width, args.layers)
    model = ctranslate2.models.Whisper(str(built))
    print(f"{built}: n_mels {model.n_mels}, languages {model.num_languages}", file=sys.stderr)
    shutil.rmtree(built / "__pycache__", ignore_errors=True)
