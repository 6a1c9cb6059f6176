"""Markdown tables of a lab JSON file, for ``learning/ann-comparison.md`` (``sextant-lab tables``)."""

from __future__ import annotations

from typing import Any

from sextant.lab.sweep import TARGET_RECALL, Curve, goals, qps_at_recall


def markdown(record: dict[str, Any]) -> str:
    """One dataset: a summary row per curve, then the goals with their ratios."""
    curves = [Curve(**c) for c in record["curves"]]
    lines = [
        f"#### {record['dataset']} (n={record['n']:,}, d={record['d']}, {record['nq']} queries, {record['metric']})",
        "",
        f"| index | system | build s | memory MB | best recall@10 | QPS at recall ≥ {TARGET_RECALL} | knob there |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in curves:
        qps = qps_at_recall(c)
        knob = next((p["knob"] for p in c.points if p["qps"] == qps and p["recall"] >= TARGET_RECALL), None)
        best = max(p["recall"] for p in c.points)
        lines.append(
            f"| {c.index} | {c.system} | {c.build_s:.1f} | {c.memory_bytes / 1e6:.1f} | {best:.3f} | "
            f"{f'{qps:,.0f}' if qps else '—'} | {f'{c.knob}={knob}' if knob is not None and c.knob != '-' else ''} |"
        )
    lines += ["", "| goal | measured | met |", "|---|---|---|"]
    for name, g in goals(curves).items():
        measured = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in g.items() if k not in ("goal", "met")}
        lines.append(f"| {name} ({g['goal']}) | {measured} | {'yes' if g['met'] else 'no'} |")
    return "\n".join(lines)
