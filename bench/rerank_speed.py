"""How cheap can the rerank stage be? The naive CrossEncoder against faster paths, in one run.

Each variant re-scores the product's fused candidates for held-out SciFact queries (the searcher's
default depth; nothing the reranker was trained on) and is timed per query, the variants rotated
query by query so load on the shared box falls on all of them alike. Reported as ratios: against
the naive path (sentence-transformers CrossEncoder, torch fp32, top-30, pairs up to 256 tokens),
and against the model's compute floor: its FLOPs for the tokens it actually ran, divided by the
matrix-multiply FLOP/s measured here with the same thread count, in the arithmetic the variant
runs (torch fp32 GEMM for torch; for int8 ONNX, onnxruntime's dynamic-quantised MatMulInteger,
the operator the exported model's projections run as). nDCG@10 of each variant on the same queries,
in the cross-encoder's own order and in the product's default fused order, says whether the speed
was bought with quality.

    python bench/rerank_speed.py --model models/reranker-scifact --qrels models/splits/scifact/heldout.tsv
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import torch

from sextant.contract.results import Hit
from sextant.evals import beir
from sextant.evals.metrics import ndcg_at_k
from sextant.kb.embeddings import quiet_model_loading
from sextant.kb.knowledge_base import KnowledgeBase
from sextant.kb.rerank import ONNX_FP32, ONNX_INT8, OnnxCrossEncoder, TorchCrossEncoder
from sextant.kb.search import fused_rerank_order
from sextant.settings import KbSettings
from sextant.training.trainer import build_cross_encoder

Logits = Callable[[list[tuple[str, str]]], np.ndarray]


@dataclass
class Variant:
    name: str
    logits: Logits
    candidates: int
    layers: int
    max_length: int
    tokenizer: Any
    quality: bool = True  # False for untrained models: cost only
    int8: bool = False  # runs under onnxruntime's int8 matmul: its floor is the int8 GEMM rate
    times: list[float] | None = None
    flops: list[float] | None = None


def matmul_flops(threads: int, n: int = 1024, repeats: int = 20) -> float:
    """Sustained fp32 GEMM FLOP/s of torch on this machine now (median of repeats)."""
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    return 2 * n**3 / _median_seconds(lambda: a @ b, repeats)


def int8_matmul_flops(threads: int, n: int = 1024, repeats: int = 20) -> float:
    """Sustained FLOP/s of onnxruntime's dynamic int8 matmul (quantise A, MatMulInteger with int8 B)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    weights = numpy_helper.from_array(rng.integers(-127, 128, (n, n), dtype=np.int8), "b")
    zero = numpy_helper.from_array(np.zeros((), dtype=np.int8), "b_zero")
    graph = helper.make_graph(
        [
            helper.make_node("DynamicQuantizeLinear", ["a"], ["a_q", "a_scale", "a_zero"]),
            helper.make_node("MatMulInteger", ["a_q", "b", "a_zero", "b_zero"], ["c"]),
        ],
        "int8_gemm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("c", TensorProto.INT32, [n, n])],
        [weights, zero],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    feed = {"a": rng.standard_normal((n, n), dtype=np.float32)}
    return 2 * n**3 / _median_seconds(lambda: session.run(None, feed), repeats)


def _median_seconds(run: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``run`` over ``repeats`` calls, after one warm-up call."""
    run()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def model_flops(
    tokenizer: Any, pairs: list[tuple[str, str]], layers: int, max_length: int, d: int = 384, ff: int = 1536
) -> float:
    """Forward FLOPs of a BERT encoder on these pairs padded to the batch's longest (what runs)."""
    encoded = tokenizer([q for q, _ in pairs], [p for _, p in pairs], truncation="longest_first", max_length=max_length)
    t = max(len(ids) for ids in encoded["input_ids"])
    per_layer = 2 * t * (4 * d * d + 2 * d * ff) + 4 * t * t * d  # projections + FFN, then QK^T and AV
    return len(pairs) * layers * per_layer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True, help="trained folder with its onnx/ exports")
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("SEXTANT_DATA_DIR", "../shared/data")) / "beir" / "scifact"
    )
    parser.add_argument("--qrels", type=Path, required=True)
    parser.add_argument("--store", type=Path, default=Path(".sextant-eval/beir-scifact"))
    parser.add_argument("--queries", type=int, default=80)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    quiet_model_loading()

    queries, qrels = beir.read_queries(args.data), beir.read_qrels(args.qrels)
    judged = sorted(q for q in qrels if q in queries)[: args.queries]
    with KnowledgeBase.open(KbSettings(chroma_dir=args.store, max_per_document=20)) as kb:
        fused = {q: kb.search(queries[q], 60, mode="rrf", detail="full", abstain=False, depth=30).hits for q in judged}

    folder = str(args.model)
    trained_layers = TorchCrossEncoder(folder).model.model.config.num_hidden_layers
    torch.manual_seed(0)
    untrained = build_cross_encoder("all-MiniLM-L6-v2", trained_layers, 256)
    torch.manual_seed(0)
    full_depth = build_cross_encoder("all-MiniLM-L6-v2", None, 256)
    tok = untrained.tokenizer

    def torch_logits(model: Any) -> Logits:
        return lambda pairs: np.asarray(
            model.predict(pairs, activation_fn=torch.nn.Identity(), show_progress_bar=False)
        )

    naive = TorchCrossEncoder(folder, threads=args.threads, max_length=256)
    short = TorchCrossEncoder(folder, threads=args.threads, max_length=128)
    fp32_128 = OnnxCrossEncoder(args.model, ONNX_FP32, threads=args.threads, max_length=128)
    onnx_128 = OnnxCrossEncoder(args.model, ONNX_INT8, threads=args.threads, max_length=128)
    onnx_96 = OnnxCrossEncoder(args.model, ONNX_INT8, threads=args.threads, max_length=96)
    n = trained_layers
    variants = [
        Variant("naive: torch fp32, top-30, 256 tok", naive.logits, 30, n, 256, tok),
        Variant("untrained same shape, naive", torch_logits(untrained), 30, n, 256, tok, quality=False),
        Variant("untrained 6 layers (full MiniLM), naive", torch_logits(full_depth), 30, 6, 256, tok, quality=False),
        Variant("torch fp32, top-30, 128 tok", short.logits, 30, n, 128, tok),
        Variant("torch fp32, top-20, 128 tok", short.logits, 20, n, 128, tok),
        Variant("onnx fp32, top-30, 128 tok", fp32_128.logits, 30, n, 128, tok),
        Variant("onnx fp32, top-20, 128 tok", fp32_128.logits, 20, n, 128, tok),
        Variant("onnx int8, top-30, 128 tok", onnx_128.logits, 30, n, 128, tok, int8=True),
        Variant("onnx int8, top-20, 128 tok", onnx_128.logits, 20, n, 128, tok, int8=True),
        Variant("onnx int8, top-30, 96 tok", onnx_96.logits, 30, n, 96, tok, int8=True),
    ]
    torch.set_num_threads(args.threads)
    gemm = [matmul_flops(args.threads)]
    gemm_int8 = [int8_matmul_flops(args.threads)]
    ranked: dict[str, list[float]] = {v.name: [] for v in variants}
    fused_ranked: dict[str, list[float]] = {v.name: [] for v in variants}
    for v in variants:
        v.times, v.flops = [], []
    for i, q in enumerate(judged):
        hits = fused[q]
        for v in variants[i % len(variants) :] + variants[: i % len(variants)]:  # rotate who goes first
            top = hits[: v.candidates]
            pairs = [(queries[q], h.text or "") for h in top]
            t = time.perf_counter()
            logits = v.logits(pairs)
            v.times.append(time.perf_counter() - t)  # type: ignore[union-attr]
            v.flops.append(model_flops(v.tokenizer, pairs, v.layers, v.max_length))  # type: ignore[union-attr]
            ranked[v.name].append(ndcg_at_k(_documents(top, logits, hits[v.candidates :]), qrels[q], 10))
            fused_ranked[v.name].append(ndcg_at_k(_fused_documents(top, logits, hits[v.candidates :]), qrels[q], 10))
        if i % 20 == 19:
            gemm.append(matmul_flops(args.threads))
            gemm_int8.append(int8_matmul_flops(args.threads))
    flops_per_s = statistics.median(gemm)
    int8_flops_per_s = statistics.median(gemm_int8)
    rrf = statistics.fmean(
        ndcg_at_k(list(dict.fromkeys(h.document_id for h in fused[q])), qrels[q], 10) for q in judged
    )
    base = statistics.median(variants[0].times or [1.0])
    rows = []
    for v in variants:
        med = statistics.median(v.times or [0.0])
        rate = int8_flops_per_s if v.int8 else flops_per_s
        floor = statistics.median(f / rate for f in v.flops or [0.0])
        rows.append({
            "variant": v.name,
            "ms_per_query_p50": round(med * 1000, 1),
            "speedup_vs_naive": round(base / med, 2),
            "vs_compute_floor": round(med / floor, 2),
            "ndcg@10": round(statistics.fmean(ranked[v.name]), 4) if v.quality else None,
            "ndcg@10_fused": round(statistics.fmean(fused_ranked[v.name]), 4) if v.quality else None,
        })  # fmt: skip
    print(
        f"queries {len(judged)}; fp32 GEMM {flops_per_s / 1e9:.1f} GFLOP/s, int8 {int8_flops_per_s / 1e9:.1f} "
        f"GFLOP/s on {args.threads} threads; rrf nDCG@10 {rrf:.4f}"
    )
    print("| variant | ms/query p50 | × faster than naive | × compute floor | nDCG@10 alone | nDCG@10 fused |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        alone, fused_ = ("–" if r[k] is None else f"{r[k]:.4f}" for k in ("ndcg@10", "ndcg@10_fused"))
        print(
            f"| {r['variant']} | {r['ms_per_query_p50']} | {r['speedup_vs_naive']} | {r['vs_compute_floor']} "
            f"| {alone} | {fused_} |"
        )
    if args.json:
        summary = {"gemm_gflops": flops_per_s / 1e9, "int8_gemm_gflops": int8_flops_per_s / 1e9, "rrf_ndcg@10": rrf}
        args.json.write_text(json.dumps({**summary, "rows": rows}, indent=2) + "\n")


def _documents(top: list[Hit], logits: np.ndarray, rest: list[Hit]) -> list[str]:
    order = [top[i] for i in np.argsort(-logits, kind="stable")] + rest
    return list(dict.fromkeys(h.document_id for h in order))


def _fused_documents(top: list[Hit], logits: np.ndarray, rest: list[Hit]) -> list[str]:
    """The product's default order: the cross-encoder's rank fused with the dense and BM25 ranks."""
    scored = [
        h.model_copy(update={"scores": h.scores.model_copy(update={"rerank": float(x)})})
        for h, x in zip(top, logits, strict=True)
    ]
    order = fused_rerank_order(scored, lambda h: h.chunk_id) + rest
    return list(dict.fromkeys(h.document_id for h in order))


if __name__ == "__main__":
    main()
