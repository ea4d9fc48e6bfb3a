"""Report figures as PNG bytes (matplotlib's Agg canvas, no pyplot state): severity curves, confusions, bars."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

# PNG metadata without the matplotlib version, so the same results give the same bytes.
_PNG_META = {"Software": None}


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata=_PNG_META, bbox_inches="tight")
    return buf.getvalue()


def _figure(width: float, height: float) -> Any:
    return Figure(figsize=(width, height), layout="constrained")


def severity_series(deltas: Sequence[Mapping[str, Any]]) -> dict[str, list[tuple[int, float, float, float]]]:
    """Per degradation subtype: (severity, accuracy, ci low, ci high), severity 0 being the clean twins.

    Only single-op conditions (`degradation:blur:2`) are curves; a combination of ops is not one
    subtype. Severity 0 is the clean accuracy on the bases of that subtype, weighted by bases;
    the interval is the paired delta's clustered bootstrap CI, placed around the variant accuracy.
    """
    rows: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for d in deltas:
        if d.get("kind") != "degradation" or "+" in d["detail"]:
            continue
        subtype, _, severity = d["detail"].rpartition(":")
        if subtype and severity.isdigit():
            rows[subtype].append(d)
    series = {}
    for subtype, ds in sorted(rows.items()):
        n = sum(d["n_bases"] for d in ds)
        clean = sum(d["clean_accuracy"] * d["n_bases"] for d in ds) / n
        points = [(0, clean, clean, clean)]
        for d in sorted(ds, key=lambda d: int(d["detail"].rpartition(":")[2])):
            sev = int(d["detail"].rpartition(":")[2])
            points.append((sev, d["variant_accuracy"], d["clean_accuracy"] + d["ci95"][0],
                           d["clean_accuracy"] + d["ci95"][1]))
        series[subtype] = points
    return series


def severity_plot(deltas: Sequence[Mapping[str, Any]], title: str) -> bytes | None:
    """Accuracy against severity, one line per degradation subtype; None without degradations."""
    series = severity_series(deltas)
    if not series:
        return None
    fig = _figure(6.0, 3.6)
    ax = fig.subplots()
    for subtype, points in series.items():
        x = [p[0] for p in points]
        y = [p[1] for p in points]
        err = [[max(p[1] - p[2], 0.0) for p in points], [max(p[3] - p[1], 0.0) for p in points]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=subtype)
    ax.set_xlabel("severity (0 = clean twin)")
    ax.set_ylabel("accuracy")
    ax.set_xticks(sorted({p[0] for pts in series.values() for p in pts}))
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title(title)
    ax.legend(loc="lower left", fontsize="small")
    return _png(fig)


def confusion_plot(confusion: Mapping[str, Any], title: str) -> bytes | None:
    """The confusion matrix (rows gold, columns predicted), counts in the cells."""
    labels, matrix = confusion.get("labels") or [], confusion.get("matrix") or []
    if not labels or not matrix:
        return None
    m = np.asarray(matrix, dtype=float)
    size = 1.2 + 0.55 * len(labels)
    fig = _figure(size + 1.5, size)
    ax = fig.subplots()
    row_sums = m.sum(axis=1, keepdims=True)
    shares = np.divide(m, row_sums, out=np.zeros_like(m), where=row_sums > 0)
    ax.imshow(shares, cmap="Blues", vmin=0, vmax=1)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(j, i, str(int(m[i, j])), ha="center", va="center",
                    color="white" if shares[i, j] > 0.6 else "black", fontsize="small")
    ax.set_xticks(range(len(labels)), labels=labels, rotation=40, ha="right", fontsize="small")
    ax.set_yticks(range(len(labels)), labels=labels, fontsize="small")
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    ax.set_title(title)
    return _png(fig)


def group_bars(groups: Mapping[str, Mapping[str, float]], title: str) -> bytes | None:
    """Horizontal bars of accuracy per group, one panel per grouping (problem family, error family)."""
    panels = [(name, values) for name, values in groups.items() if values]
    if not panels:
        return None
    height = 0.8 + 0.32 * sum(len(v) for _, v in panels) + 0.5 * len(panels)
    fig = _figure(6.0, height)
    axes = fig.subplots(len(panels), 1, squeeze=False,
                        height_ratios=[max(len(v), 1) for _, v in panels])[:, 0]
    for ax, (name, values) in zip(axes, panels):
        keys = list(values)
        ax.barh(range(len(keys)), [values[k] for k in keys], color="#4c72b0")
        ax.set_yticks(range(len(keys)), labels=keys, fontsize="small")
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        for i, k in enumerate(keys):
            inside = values[k] > 0.85   # write the value inside a long bar, after a short one
            ax.text(values[k] - 0.01 if inside else values[k] + 0.01, i, f"{values[k]:.2f}", va="center",
                    ha="right" if inside else "left", color="white" if inside else "black", fontsize="small")
        ax.set_title(name, fontsize="medium", loc="left")
    axes[-1].set_xlabel("accuracy (mean credit)")
    fig.suptitle(title)
    return _png(fig)
