"""Shortcut probes: can a model tell error rows from no-error rows without doing the math?

    .venv/bin/python benchmarks/shortcuts.py [--bases 800] [--seed 18001] [--workers 2] [--style worked]
        [--subtypes all|fermat_like|errorradar_like] [--run DIR | --out DIR] [--images DIR] [--write]

Text side: a text-only run of every registered family (render disabled, quota allocation), then
TF-IDF character 1-4-grams + logistic regression, 5-fold cross-validation grouped by base problem,
ROC AUC of error vs no-error from the step texts alone (target <= 0.60). Token check: no token in
more than half of one control type's rows and under 5 % of clean rows (offenders printed).

Image side (``--images RUN``, a run with photos of every content kind): within each capture condition,
features a model could read without looking at the page (file-name tokens, format, file size,
width/height, mean intensity) -> logistic regression and gradient boosting, grouped CV, AUC per
condition (target <= 0.55).

``--write`` appends the figures and the command that made them to benchmarks/results_shortcuts.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")  # the probes are small; threads only fight the neighbours on 2 cores
ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results_shortcuts.md"
TEXT_TARGET, IMAGE_TARGET = 0.60, 0.55
CONTROL_SHARE, CLEAN_SHARE = 0.5, 0.05


def run_config(bases: int, seed: int, subtypes: str, style: str | None) -> dict[str, Any]:
    """An all-families text-only config (render disabled, quota allocation)."""
    from perturb.reasoning import INJECTORS
    from synth.config import load_config
    from synth.generators import REGISTRY

    if subtypes == "all":
        mix = {s: 1.0 for s in sorted(INJECTORS)}
    else:
        mix = dict(load_config(ROOT / "configs" / f"{subtypes}.yaml").inject.subtypes)
    generate: dict[str, Any] = {"families": {f: 1.0 for f in sorted(REGISTRY)},
                                "difficulties": ["easy", "medium", "hard"], "question_types": ["free"],
                                "allocation": "quota"}
    if style:
        generate["solution_style"] = style
    return {"name": "shortcuts", "seed": seed, "count": bases, "generate": generate,
            "inject": {"variants_per_base": 2, "subtypes": mix},
            "render": {"enabled": False}, "output": {"shard_size": 25}}


def photo_config(bases: int, seed: int) -> dict[str, Any]:
    """The quickstart with ``bases`` base problems; degrade.apply_to is left at its default (every kind)."""
    import yaml

    data = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    data.update(name="shortcuts_photos", seed=seed, count=bases)
    data.get("degrade", {}).pop("apply_to", None)
    return data


def anonymized(run_dir: Path, folder: Path) -> Path:
    """The run as an anonymized export sees it (opaque ids and image names, shuffled order)."""
    from synth.exports._anonymize import anonymous_view

    anonymous_view(run_dir, folder)
    return folder


def generate(data: dict[str, Any], workers: int, out: Path) -> float:
    """Run the pipeline into ``out``; wall seconds."""
    from synth.config import RunConfig
    from synth.pipeline import run

    t0 = time.perf_counter()
    run(RunConfig.model_validate(data), out, workers=workers, overwrite=True)
    return time.perf_counter() - t0


def rows_of(run_dir: Path) -> list[dict[str, Any]]:
    with (run_dir / "manifest.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def kind_of(row: dict[str, Any]) -> str:
    if row.get("error"):
        return "error"
    if row.get("control"):
        return "control:" + row["control"]["subtype"]
    return "clean"


def step_text(row: dict[str, Any]) -> str:
    return "\n".join(s["text"] for s in row["steps"])


_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:/\d+)?")


def _shape(number: str) -> str:
    """A number's written shape, so cues like a trailing '.0' count as one token across rows."""
    if "/" in number:
        return "N/N"
    if number.endswith(".0"):
        return "N.0"
    return "N.N" if "." in number else "N"


def tokens(text: str) -> set[str]:
    """Words (lower-cased), symbols and number shapes of a row's steps."""
    found = {w.lower() for w in re.findall(r"[^\W\d_]+", text)}
    found |= {_shape(n) for n in _NUMBER.findall(text)}
    found |= set(re.findall(r"[^\w\s]", text))
    return found


def token_check(rows: list[dict[str, Any]]) -> list[tuple[str, str, float, float]]:
    """(control type, token, share of its rows, share of clean rows) for every giveaway token."""
    by_kind: dict[str, list[set[str]]] = defaultdict(list)
    for row in rows:
        by_kind[kind_of(row)].append(tokens(step_text(row)))
    clean = by_kind.get("clean", [])
    clean_counts = Counter(t for ts in clean for t in ts)
    offenders = []
    for kind in sorted(k for k in by_kind if k.startswith("control:")):
        rows_k = by_kind[kind]
        counts = Counter(t for ts in rows_k for t in ts)
        for tok, n in sorted(counts.items()):
            share, clean_share = n / len(rows_k), clean_counts[tok] / max(1, len(clean))
            if share > CONTROL_SHARE and clean_share < CLEAN_SHARE:
                offenders.append((kind.split(":", 1)[1], tok, share, clean_share))
    return offenders


def text_auc(rows: list[dict[str, Any]], seed: int) -> tuple[float, dict[str, float]]:
    """Out-of-fold ROC AUC of TF-IDF char 1-4-grams + logistic regression (5-fold, grouped by base);
    also the AUC of each row kind against the no-error rows (clean and controls)."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline

    texts = [step_text(r) for r in rows]
    y = np.array([1 if r.get("error") else 0 for r in rows])
    groups = np.array([r["base_id"] for r in rows])
    scores = np.zeros(len(rows))
    folds = GroupKFold(n_splits=5, shuffle=True, random_state=seed)
    for train, test in folds.split(texts, y, groups):
        model = make_pipeline(TfidfVectorizer(analyzer="char", ngram_range=(1, 4), sublinear_tf=True, min_df=2),
                              LogisticRegression(max_iter=2000, C=1.0))
        model.fit([texts[i] for i in train], y[train])
        scores[test] = model.predict_proba([texts[i] for i in test])[:, 1]
    per_kind = {}
    kinds = np.array([kind_of(r) for r in rows])
    for kind in sorted(set(kinds) - {"error"}):
        mask = (kinds == kind) | (y == 1)
        per_kind[kind] = float(roc_auc_score(y[mask], scores[mask]))
    errors = np.array([(r.get("error") or {}).get("subtype", "") for r in rows])
    for subtype in sorted(set(errors) - {""}):
        mask = (errors == subtype) | (y == 0)
        per_kind["error:" + subtype] = float(roc_auc_score(y[mask], scores[mask]))
    return float(roc_auc_score(y, scores)), per_kind


def family_auc(rows: list[dict[str, Any]], seed: int) -> float:
    """Out-of-fold AUC of the family's error share alone (same folds): how much a model gains from knowing
    which family a row is from, because the allocation gives families different shares of error variants."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold

    y = np.array([1 if r.get("error") else 0 for r in rows])
    fam = np.array([r["family"] for r in rows])
    groups = np.array([r["base_id"] for r in rows])
    scores = np.zeros(len(rows))
    for train, test in GroupKFold(n_splits=5, shuffle=True, random_state=seed).split(fam, y, groups):
        prior = y[train].mean()
        share = {f: (y[train][fam[train] == f].sum() + prior * 5) / ((fam[train] == f).sum() + 5)
                 for f in set(fam[test])}
        scores[test] = [share[f] for f in fam[test]]
    return float(roc_auc_score(y, scores))


# ---------------------------------------------------------------- image side

def condition_of(row: dict[str, Any]) -> str:
    degradations = row.get("degradations") or []
    if not degradations:
        return "undegraded"
    return "+".join(f"{d['subtype']}{d['severity']}" for d in degradations)


def image_features(run_dir: Path, rows: list[dict[str, Any]]) -> tuple[np.ndarray, list[str]]:
    """What a model could use without reading the page: name tokens, format, bytes, size, mean intensity."""
    from PIL import Image

    name_tokens = sorted({t for r in rows for t in re.split(r"[-_./]", Path(r["image"]).name) if t})
    index = {t: i for i, t in enumerate(name_tokens)}
    formats = sorted({Path(r["image"]).suffix.lower() for r in rows})
    features = []
    for r in rows:
        path = run_dir / r["image"]
        with Image.open(path) as im:
            width, height = im.size
            mean = float(np.asarray(im.convert("L"), dtype=np.float32).mean())
        name = np.zeros(len(name_tokens))
        for t in re.split(r"[-_./]", path.name):
            if t in index:
                name[index[t]] = 1
        fmt = [float(path.suffix.lower() == f) for f in formats]
        features.append([*name, *fmt, path.stat().st_size / 1e5, width / 1e3, height / 1e3, mean / 255])
    return np.array(features), name_tokens


def image_aucs(run_dir: Path, seed: int) -> dict[str, tuple[int, float, float]]:
    """Per capture condition: (rows, AUC of logistic regression, AUC of gradient boosting)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rows = [r for r in rows_of(run_dir) if r.get("image")]
    by_condition: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_condition[condition_of(r)].append(r)
    out = {}
    for condition, group in sorted(by_condition.items()):
        y = np.array([1 if r.get("error") else 0 for r in group])
        if len(set(y)) < 2 or len(group) < 10:
            continue
        x, _ = image_features(run_dir, group)
        bases = np.array([r["base_id"] for r in group])
        n_splits = min(5, len(set(bases)))
        aucs = []
        for model in (make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
                      HistGradientBoostingClassifier(max_iter=100, random_state=seed)):
            scores = np.zeros(len(group))
            for train, test in GroupKFold(n_splits=n_splits, shuffle=True, random_state=seed).split(x, y, bases):
                if len(set(y[train])) < 2:
                    scores[test] = y[train].mean()
                    continue
                model.fit(x[train], y[train])
                scores[test] = model.predict_proba(x[test])[:, 1]
            aucs.append(float(roc_auc_score(y, scores)))
        out[condition] = (len(group), aucs[0], aucs[1])
    return out


# ---------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", type=int, default=800)
    parser.add_argument("--seed", type=int, default=18001)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--subtypes", default="all", help="all, or a packaged config whose mix to use")
    parser.add_argument("--style", default=None, help="generate.solution_style (worked, student, cot)")
    parser.add_argument("--run", type=Path, help="an existing text run to probe instead of generating one")
    parser.add_argument("--out", type=Path, help="generate into this folder and keep it (default: a temp folder)")
    parser.add_argument("--images", type=Path, help="a run with photos: the image-side probe")
    parser.add_argument("--photos", type=int, default=0, help="generate a quickstart-like run of this many bases "
                        "(photos of every content kind) into --photo-out and probe it, raw and anonymized")
    parser.add_argument("--photo-out", type=Path, default=Path("/tmp/shortcuts_photos"))
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text)
        lines.append(text)

    command = "python benchmarks/shortcuts.py " + " ".join(sys.argv[1:] if argv is None else argv)
    say(f"command: `{command}`")
    text_side = args.run is not None or (args.images is None and not args.photos)
    if text_side:
        with tempfile.TemporaryDirectory(prefix="shortcuts-") as tmp:
            run_dir = args.run
            if run_dir is None:
                run_dir = args.out or Path(tmp) / "run"
                wall = generate(run_config(args.bases, args.seed, args.subtypes, args.style), args.workers, run_dir)
                say(f"generated {args.bases} bases (seed {args.seed}, subtypes {args.subtypes}, "
                    f"style {args.style or 'default'}) in {wall:.0f} s with {args.workers} workers")
            rows = rows_of(run_dir)
        kinds = Counter(kind_of(r) for r in rows)
        say(f"rows: {len(rows)} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})")
        t0 = time.perf_counter()
        auc, per_kind = text_auc(rows, args.seed)
        verdict = "ok" if auc <= TEXT_TARGET else "ABOVE TARGET"
        say(f"text AUC (error vs no-error, char 1-4-gram TF-IDF + LR, 5-fold GroupKFold by base): "
            f"{auc:.3f} (target <= {TEXT_TARGET}: {verdict}; {time.perf_counter() - t0:.0f} s)")
        say(f"family-only baseline (each family's error share in the training folds): "
            f"AUC {family_auc(rows, args.seed):.3f}")
        say("per row kind vs the other class (out-of-fold scores):")
        for kind, value in sorted(per_kind.items(), key=lambda kv: -abs(kv[1] - 0.5)):
            say(f"  {kind:<40} {value:.3f}")
        offenders = token_check(rows)
        say(f"token check (> {CONTROL_SHARE:.0%} of a control type's rows, < {CLEAN_SHARE:.0%} of clean rows): "
            f"{len(offenders)} offender(s)")
        for control, tok, share, clean_share in offenders:
            say(f"  {control}: {tok!r} in {share:.0%} of its rows, {clean_share:.1%} of clean rows")
    probes: list[tuple[str, Path]] = []
    if args.images is not None:
        probes.append((f"{args.images.name} (as written)", args.images))
    if args.photos:
        wall = generate(photo_config(args.photos, args.seed), args.workers, args.photo_out)
        rows = rows_of(args.photo_out)
        kinds = Counter(f"{kind_of(r)}{'/photo' if r.get('degradations') else ''}" for r in rows)
        say(f"generated a quickstart-like run of {args.photos} bases with photos of every kind (seed {args.seed}) "
            f"in {wall:.0f} s: {len(rows)} rows ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})")
        anon = args.photo_out.with_name(args.photo_out.name + "_anonymized")
        if anon.exists():
            import shutil

            shutil.rmtree(anon)
        probes += [("run as written (file names carry -e/-s)", args.photo_out),
                   ("anonymized export view (--anonymize)", anonymized(args.photo_out, anon))]
    for title, folder in probes:
        t0 = time.perf_counter()
        results = image_aucs(folder, args.seed)
        worst = max((max(a, b) for _, a, b in results.values()), default=float("nan"))
        say(f"image side, {title}: per capture condition, rows, AUC logistic regression, AUC gradient boosting "
            f"({time.perf_counter() - t0:.0f} s); worst {worst:.3f} (target <= {IMAGE_TARGET})")
        for condition, (n, lr, gbm) in results.items():
            say(f"  {condition:<50} {n:>5} {lr:.3f} {gbm:.3f}")
        if results:
            say(f"  median over conditions: LR {statistics.median(v[1] for v in results.values()):.3f}, "
                f"GBM {statistics.median(v[2] for v in results.values()):.3f}")
    if args.write:  # each invocation appends its section; delete the file to start afresh
        head = "" if RESULTS.exists() else "# Shortcut probes (issue 18 acceptance)\n\n"
        with RESULTS.open("a", encoding="utf-8") as fh:
            fh.write(head + "\n".join([f"## {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
                                       *(f"    {line}" for line in lines), "", ""]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
