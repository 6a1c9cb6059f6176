"""Export a trained CrossEncoder folder to int8 ONNX, beside its torch weights.

Dynamic quantisation (onnxruntime's ``quantize_dynamic``): weights stored as int8, activations
quantised per batch at run time, so no calibration data is needed. The product's reranker loads
``onnx/model_qint8.onnx`` when it is there (``sextant.kb.rerank``).
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path

from sextant.kb.rerank import ONNX_INT8


def export_int8(folder: Path) -> Path:
    """Write ``folder/onnx/model_qint8.onnx`` from the CrossEncoder in ``folder``; returns its path.

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
    target = folder / ONNX_INT8
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "model.onnx"
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
        quantize_dynamic(str(fp32), str(target), weight_type=QuantType.QInt8)
    return target
