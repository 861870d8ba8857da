"""Requantize a GGUF's K-quant weight matrices to Q8_0 or Q4_0 (dequantize -> quantize with gguf-py), keeping
every other tensor (norms, token embedding) and all metadata as they are: the experiment on whether
another quantization of the same weights reads prompts faster on this CPU (it does not: docs/enterprise.md, "Cost of
a 5-minute call"). Measurement code only; `gguf` is not a project dependency:

    python3 -m venv /tmp/qv && /tmp/qv/bin/pip install gguf
    /tmp/qv/bin/python bench/insight/requant.py models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf /tmp/q4_0.gguf Q4_0
    nice -n 10 npx tsx bench/insight/speed.ts --model /tmp/q4_0.gguf
"""

import sys
import time

import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants

src, dst, target = sys.argv[1], sys.argv[2], T[sys.argv[3]]
r = gguf.GGUFReader(src)
arch = r.fields[gguf.Keys.General.ARCHITECTURE].contents()
w = gguf.GGUFWriter(dst, arch)
for f in r.fields.values():
    if f.name == gguf.Keys.General.ARCHITECTURE or f.name.startswith("GGUF."):
        continue
    vt = f.types[0]
    st = f.types[-1] if vt == gguf.GGUFValueType.ARRAY else None
    val = f.contents()
    if f.name == gguf.Keys.General.FILE_TYPE:
        val = {T.Q8_0: 7, T.Q4_0: 2}[target]
    w.add_key_value(f.name, val, vt, sub_type=st)
t0 = time.time()
out = []
for t in r.tensors:
    data, ttype = t.data, t.tensor_type
    convert = (
        ttype not in (T.F32, T.F16, target)
        and "token_embd" not in t.name
        and len(t.shape) == 2
    )
    if convert:
        f32 = quants.dequantize(t.data, ttype)  # shape: rows x cols (numpy order)
        data = quants.quantize(f32, target)
        ttype = target
    out.append((t.name, data, ttype))
    print(t.name, t.tensor_type.name, "->", ttype.name, data.shape, file=sys.stderr)
for name, data, ttype in out:
    w.add_tensor_info(name, data.shape, data.dtype, data.nbytes, ttype)
w.write_header_to_file()
w.write_kv_data_to_file()
w.write_ti_data_to_file()
for name, data, ttype in out:
    w.write_tensor_data(data)
w.close()
print("done", time.time() - t0, "s", file=sys.stderr)
