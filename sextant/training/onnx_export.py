"""Export a trained CrossEncoder folder to ONNX, fp32 and int8, beside its torch weights.

The int8 copy is dynamically quantised (onnxruntime's ``quantize_dynamic``): weights stored as int8,
activations quantised per batch at run time, so no calibration data is needed. The product's
reranker loads the copy ``SEXTANT_RERANK_PRECISION`` names when it is there (``sextant.kb.rerank``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

from sextant.kb.rerank import ONNX_FP32, ONNX_INT8


def export_onnx(folder: Path) -> tuple[Path, Path]:
    """Write ``folder/onnx/model.onnx`` and ``model_qint8.onnx`` from the CrossEncoder in ``folder``.

    Raises:
        ImportError: the ``onnx`` package is missing (``pip install 'sextant-kb[train]'``).
    """
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from sentence_transformers import CrossEncoder

    net = CrossEncoder(str(folder), device="cpu").model.eval()
    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones(2, 16, dtype=torch.long) for _ in names)
    axes = {n: {0: "batch", 1: "tokens"} for n in names} | {"logits": {0: "batch"}}
    fp32, int8 = folder / ONNX_FP32, folder / ONNX_INT8
    fp32.parent.mkdir(parents=True, exist_ok=True)
    # The TorchScript exporter needs no onnxscript; its deprecation and tracer notices are
    # expected (batch and length stay dynamic, and tests compare its scores with torch's).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net,
            dummy,
            str(fp32),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    return fp32, int8
