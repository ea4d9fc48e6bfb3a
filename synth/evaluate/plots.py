"""Report figures as PNG bytes (matplotlib's Agg canvas, no pyplot state): severity curves, confusions, bars."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Point:
    """One cell of the severity plot: accuracy with its own interval, and the paired delta with its interval."""

    x: float
    accuracy: float
    accuracy_ci: tuple[float, float]
    delta: float | None          # None at severity 0 (the clean twins themselves)
    delta_ci: tuple[float, float] | None
    n_bases: int
    small: bool


def severity_series(deltas: Sequence[Mapping[str, Any]]) -> dict[str, list[Point]]:
    """Per degradation subtype, its points by severity (0 = the clean twins of its bases); then per capture
    profile, one point under the profile's name (x = -1: placed after the severities by the plot).

    Only single-op conditions (`degradation:blur:2`) make a subtype's curve; a profile is one named condition
    (`profile:desk_lamp_tilted`). Severity 0 is the clean accuracy on the bases of the subtype's severity 1
    cell when there is one (else its lowest), with that cell's interval for the clean accuracy.
    """
    rows: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    profiles = []
    for d in deltas:
        if d.get("kind") == "profile":
            profiles.append(d)
            continue
        if d.get("kind") != "degradation" or "+" in d["detail"]:
            continue
        subtype, _, severity = d["detail"].rpartition(":")
        if subtype and severity.isdigit():
            rows[subtype].append(d)

    def ci(d: Mapping[str, Any], key: str, default: float) -> tuple[float, float]:
        pair = d.get(key)
        return (float(pair[0]), float(pair[1])) if pair else (default, default)

    series: dict[str, list[Point]] = {}
    for subtype, ds in sorted(rows.items()):
        ds = sorted(ds, key=lambda d: int(d["detail"].rpartition(":")[2]))
        first = ds[0]
        points = [Point(0, first["clean_accuracy"], ci(first, "clean_ci95", first["clean_accuracy"]), None, None,
                        first["n_bases"], bool(first.get("small_sample")))]
        for d in ds:
            points.append(Point(int(d["detail"].rpartition(":")[2]), d["variant_accuracy"],
                                ci(d, "variant_ci95", d["variant_accuracy"]), d["delta"], ci(d, "ci95", d["delta"]),
                                d["n_bases"], bool(d.get("small_sample"))))
        series[subtype] = points
    for d in sorted(profiles, key=lambda d: d["detail"]):
        series[f"profile:{d['detail']}"] = [Point(-1, d["variant_accuracy"],
                                                  ci(d, "variant_ci95", d["variant_accuracy"]), d["delta"],
                                                  ci(d, "ci95", d["delta"]), d["n_bases"],
                                                  bool(d.get("small_sample")))]
    return series


def _errorbar(ax: Any, x: float, y: float, interval: tuple[float, float], *, color: str, marker: str, small: bool,
              label: str | None) -> None:
    err = [[max(y - interval[0], 0.0)], [max(interval[1] - y, 0.0)]]
    ax.errorbar([x], [y], yerr=err, fmt=marker, color=color, capsize=3, markersize=6, label=label,
                markerfacecolor="white" if small else color)


def severity_plot(deltas: Sequence[Mapping[str, Any]], title: str) -> bytes | None:
    """Two panels over severity, subtypes side by side at each severity and capture profiles after them by name:
    accuracy with its own 95 % interval (top) and the paired delta against the clean twins with its interval
    (bottom). Hollow markers: fewer than 30 base problems. None without degradations."""
    series = severity_series(deltas)
    if not series:
        return None
    curves = {k: v for k, v in series.items() if not k.startswith("profile:")}
    profiles = [k for k in series if k.startswith("profile:")]
    top_sev = max((p.x for pts in curves.values() for p in pts), default=0)
    slots = {name: top_sev + 1.2 + i for i, name in enumerate(profiles)}
    width = 0.5 / max(len(curves), 1)
    colours = _COLOURS
    fig = _figure(max(6.0, 4.5 + 0.9 * len(profiles)), 5.4)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    for k, (subtype, points) in enumerate(curves.items()):
        offset = (k - (len(curves) - 1) / 2) * width
        colour = colours[k % len(colours)]
        top.plot([p.x + offset for p in points], [p.accuracy for p in points], color=colour, alpha=0.5, lw=1)
        for j, p in enumerate(points):
            _errorbar(top, p.x + offset, p.accuracy, p.accuracy_ci, color=colour, marker="o", small=p.small,
                      label=subtype if j == 0 else None)
            if p.delta is not None and p.delta_ci is not None:
                _errorbar(bottom, p.x + offset, p.delta, p.delta_ci, color=colour, marker="o", small=p.small,
                          label=None)
    for name in profiles:
        (p,) = series[name]
        x = slots[name]
        _errorbar(top, x, p.accuracy, p.accuracy_ci, color="#333333", marker="D", small=p.small, label=None)
        _errorbar(bottom, x, p.delta, p.delta_ci, color="#333333", marker="D", small=p.small, label=None)
    ticks = sorted({p.x for pts in curves.values() for p in pts})
    labels = ["clean" if t == 0 else str(int(t)) for t in ticks]
    bottom.set_xticks([*ticks, *slots.values()], labels=[*labels, *(n.partition(":")[2] for n in profiles)],
                      fontsize="small")
    for label in bottom.get_xticklabels()[len(ticks):]:
        label.set_rotation(20)
        label.set_ha("right")
    if profiles:
        for ax in (top, bottom):
            ax.axvline(top_sev + 0.6, color="#999999", lw=0.8, ls=":")
    top.set_ylabel("accuracy (95 % CI)")
    top.set_ylim(-0.04, 1.04)
    bottom.axhline(0, color="#555555", lw=0.8)
    bottom.set_ylabel("Δ vs clean twin")
    bottom.set_xlabel("severity (clean = the clean twins)" + ("; capture profiles by name" if profiles else ""))
    lo = min([-0.05] + [p.delta_ci[0] for pts in series.values() for p in pts if p.delta_ci])
    hi = max([0.05] + [p.delta_ci[1] for pts in series.values() for p in pts if p.delta_ci])
    bottom.set_ylim(max(lo - 0.05, -1.05), min(hi + 0.05, 1.05))
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    small = any(p.small for pts in series.values() for p in pts)
    top.set_title(title + ("\n(hollow markers: fewer than 30 base problems, intervals unreliable)" if small else ""),
                  fontsize="medium")
    if curves:
        top.legend(loc="lower left", fontsize="small", ncols=min(len(curves), 4))
    return _png(fig)


_COLOURS = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
            "#64b5cd")


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
