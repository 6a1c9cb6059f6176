"""One recall@10 / queries-per-second chart per dataset (matplotlib, a dev dependency)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

STYLE = {"sextant": "-", "faiss": "--", "hnswlib": ":", "numpy": "-."}
COLOUR = {"flat": "black", "hnsw": "tab:blue", "ivfpq": "tab:orange", "ivfpq_rerank": "tab:green"}


def recall_qps(record: dict[str, Any], path: Path) -> Path:
    """Draw every curve of one dataset's record (from ``sweep.report``) into a small PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=90)
    for curve in record["curves"]:
        pts = sorted(curve["points"], key=lambda p: p["recall"])
        label = f"{curve['index']} ({curve['system']})"
        ax.plot(
            [p["recall"] for p in pts],
            [p["qps"] for p in pts],
            STYLE.get(curve["system"], "-"),
            color=COLOUR.get(curve["index"], "grey"),
            marker="o" if len(pts) == 1 else ".",
            label=label,
        )
    ax.set_yscale("log")
    ax.set_xlabel("recall@10")
    ax.set_ylabel("queries/s (1 thread, log)")
    ax.set_title(f"{record['dataset']}: n={record['n']:,}, d={record['d']}, {record['metric']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path
