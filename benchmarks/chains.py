"""Solution styles (issue 19): chain lengths beside the benchmarks', reading steps, phrasing variety, label
agreement and speed, per style.

    .venv/bin/python benchmarks/chains.py [--bases 200] [--distinct 1000] [--sweep 2] [--speed 300] [--runs 3]
        [--write]

- errorradar_like (student) mean steps per chain, mmerror_like (cot) mean words per chain: text-only runs
  of the packaged configs (``--bases`` base problems each), error rows (what the benchmarks' chains are)
  and all rows;
- share of figure-required rows with a reading step (both runs);
- phrasings per step kind per family: the bank sizes every family draws from, and the distinct phrasings
  seen (nouns filled, math cut out) per family and kind in the runs;
- distinct-chain rate over ``--distinct`` clean items of one family, per style: whole texts, and the
  phrasing skeletons alone (math cut out);
- injection sweep: every family, ``--sweep`` problems per family and difficulty, every subtype that applies,
  every style: variants dropped for a label disagreement (must be 0), visual errors whose first wrong step
  is a reading step;
- speed: text-only generation + injection + verification + write-up of the quickstart mix in each style,
  items per CPU second (``time.process_time``: a figure per core that a loaded machine does not distort),
  median of ``--runs``.
``--write`` writes benchmarks/results_chains.md.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import zlib
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import yaml  # noqa: E402

from perturb.reasoning import REGISTRY as INJECTORS  # noqa: E402
from perturb.reasoning import inject  # noqa: E402
from perturb.reasoning.base import clean_variant  # noqa: E402
from synth.chains import STYLES, bank, write_contents  # noqa: E402
from synth.chains._base import KINDS  # noqa: E402
from synth.config import validate_config  # noqa: E402
from synth.generators import REGISTRY as FAMILIES  # noqa: E402
from synth.generators import get_family  # noqa: E402
from synth.records import Item, Step  # noqa: E402
from synth.seeding import stage_rng  # noqa: E402
from synth.stages import ShardStats, build_items  # noqa: E402
from synth.verification import READING_RULE  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results_chains.md"
WORDED = ("student", "cot")
DISTINCT_FAMILY = "geometry.circle.area"


def text_config(name: str, bases: int, style: str | dict[str, float] | None = None) -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "configs" / f"{name}.yaml").read_text())
    data.update(count=bases, render={"enabled": False}, degrade={"ops": [], "profiles": []})
    if style is not None:
        data["generate"]["solution_style"] = style
    return data


def items_of(data: dict[str, Any]) -> tuple[list[Item], ShardStats, float]:
    config = validate_config(data)
    stats = ShardStats()
    start = time.process_time()
    items = [item for index in range(config.count) for item, _ in build_items(config, index, stats)]
    return items, stats, time.process_time() - start


def words(item: Item) -> int:
    return sum(len(s.text.split()) for s in item.variant.steps)


def skeleton(step: Step) -> str:
    out, at = [], 0
    for a, b in step.spans:
        out.append(step.text[at:a])
        at = b
    return "□".join([*out, step.text[at:]])


def kind_of(step: Step, k: int) -> str:
    """The bank a step drew from, told by its rule (a styled step keeps its worked rule)."""
    from synth.chains._base import line_kind

    if step.rule == READING_RULE:
        return "read"
    if step.rule == "conclude":
        return "conclude"
    return line_kind(step.rule, k)


def runs(bases: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    seen: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for name, style in (("errorradar_like", "student"), ("mmerror_like", "cot")):
        items, stats, _ = items_of(text_config(name, bases))
        errors = [i for i in items if i.variant.error is not None]
        required = [i for i in items if i.problem.image_role == "required"]
        with_reading = [i for i in required if any(s.rule == READING_RULE for s in i.variant.steps)]
        out[name] = {
            "style": style, "rows": len(items), "error_rows": len(errors),
            "steps_error": statistics.mean(len(i.variant.steps) for i in errors),
            "steps_all": statistics.mean(len(i.variant.steps) for i in items),
            "words_error": statistics.mean(words(i) for i in errors),
            "words_all": statistics.mean(words(i) for i in items),
            "question_words": statistics.mean(len(i.problem.question_text.split()) for i in items),
            "required": len(required), "required_with_reading": len(with_reading),
            "funnel": stats.funnel.as_dict().get(f"chains.{style}", {}),
        }
        for item in items:
            k = 0
            for step in item.variant.steps:
                if step.rule not in (READING_RULE, "conclude"):
                    k += 1
                seen[(item.problem.family, style, kind_of(step, k))].add(skeleton(step))
    out["seen"] = seen
    return out


def distinct(n: int) -> dict[str, tuple[float, float]]:
    family = get_family(DISTINCT_FAMILY)
    problems = [family.build(stage_rng(i, "chains-distinct"), difficulty=("easy", "medium", "hard")[i % 3],
                             question_type="free", problem_id=f"d{i}") for i in range(n)]
    out = {}
    for style in ("worked", *WORDED):
        texts, skeletons = set(), set()
        for i, problem in enumerate(problems):
            (_, variant), = write_contents(problem, [(problem.id, clean_variant(problem))], style, seed=i).contents
            texts.add(tuple(s.text for s in variant.steps))
            skeletons.add(tuple(skeleton(s) for s in variant.steps))
        out[style] = (len(texts) / n, len(skeletons) / n)
    return out


def sweep(per: int) -> dict[str, Any]:
    rejected: Counter[tuple[str, str]] = Counter()
    kept: Counter[str] = Counter()
    visual: Counter[tuple[str, bool]] = Counter()
    misses: Counter[tuple[str, str]] = Counter()
    for family_id in sorted(FAMILIES):
        family = get_family(family_id)
        for k in range(per * 3):
            try:
                problem = family.build(stage_rng(k, "chains-sweep", zlib.crc32(family_id.encode()) % 9973),
                                       difficulty=("easy", "medium", "hard")[k % 3], question_type="free",
                                       problem_id=f"s{k}")
            except Exception:  # noqa: BLE001 - a family that cannot build here is not this benchmark's subject
                continue
            contents = [(problem.id, clean_variant(problem))]
            for j, subtype in enumerate(sorted(INJECTORS)):
                if INJECTORS[subtype].applies(family, problem):
                    variant = inject(problem, subtype, stage_rng(k, "chains-sweep-inject", j))
                    if variant is not None:
                        contents.append((f"{problem.id}-{subtype}", variant))
            for style in STYLES:
                styled = write_contents(problem, contents, style, seed=k)
                for reason, n in styled.rejected.items():
                    rejected[(style, reason)] += n
                kept[style] += len(styled.contents)
                for _, v in styled.contents:
                    if v.error is not None and v.error.family == "visual_perception":
                        at_reading = v.steps[v.error.first_error_step - 1].rule == READING_RULE
                        visual[(style, at_reading)] += 1
                        if not at_reading and style != "worked":
                            misses[(family_id, v.error.subtype)] += 1
    return {"rejected": rejected, "kept": kept, "visual": visual, "misses": misses}


def speed(bases: int, repeats: int) -> dict[str, tuple[float, float, float]]:
    """(items per CPU second, steps per chain, share of CPU in the write-up stage) per style. The styles take turns
    within each repeat, so a change of load on a shared machine falls on every style alike, each on problems of its
    own seed: on the same problems the first style would warm the parse and SymPy caches for the others (cot,
    first, measured ~30 % slower than when it went last)."""
    for style in STYLES:
        items_of(text_config("quickstart", max(10, bases // 10), style))  # warm caches (templates, SymPy) untimed
    rates: dict[str, list[float]] = defaultdict(list)
    shares: dict[str, list[float]] = defaultdict(list)
    steps: dict[str, float] = {}
    for r in range(repeats):
        for k, style in enumerate(STYLES):
            data = text_config("quickstart", bases, style)
            data["seed"] = 1000 + 10 * r + k
            items, stats, seconds = items_of(data)
            rates[style].append(len(items) / seconds)
            shares[style].append(stats.seconds.get("write_up", 0.0) / sum(stats.seconds.values()))
            steps[style] = statistics.mean(len(i.variant.steps) for i in items)
    return {st: (statistics.median(rates[st]), steps[st], statistics.median(shares[st])) for st in STYLES}


def report(args: argparse.Namespace, r: dict[str, Any], d: dict[str, tuple[float, float]], s: dict[str, Any],
           v: dict[str, tuple[float, float, float]], seconds: float) -> str:
    er, mm = r["errorradar_like"], r["mmerror_like"]
    lines = ["# Solution styles: chain lengths, readings, phrasing variety, label agreement, speed", "",
             f"`.venv/bin/python benchmarks/chains.py --bases {args.bases} --distinct {args.distinct} "
             f"--sweep {args.sweep} --speed {args.speed} --runs {args.runs}` ({seconds:.0f} s). "
             "Text-only runs (render disabled).", "",
             "## Chain length beside the benchmarks'", "",
             "| run (style) | rows | error rows | steps / chain (error rows) | steps (all rows) | words / chain "
             "(error rows) | words (all rows) | benchmark | target |",
             "|---|---|---|---|---|---|---|---|---|",
             f"| errorradar_like ({er['style']}) | {er['rows']} | {er['error_rows']} | {er['steps_error']:.2f} | "
             f"{er['steps_all']:.2f} | {er['words_error']:.1f} | {er['words_all']:.1f} | ErrorRadar 7.6 steps | "
             f">= 6.1 steps: {'yes' if er['steps_error'] >= 6.1 else 'NO'} |",
             f"| mmerror_like ({mm['style']}) | {mm['rows']} | {mm['error_rows']} | {mm['steps_error']:.2f} | "
             f"{mm['steps_all']:.2f} | {mm['words_error']:.1f} | {mm['words_all']:.1f} | MMErroR 94.7 words "
             f"(questions 37.2) | 71-118 words: {'yes' if 71 <= mm['words_error'] <= 118 else 'NO'} |", "",
             f"Question words: errorradar_like {er['question_words']:.1f}, mmerror_like {mm['question_words']:.1f}. "
             f"Write-up funnel: errorradar_like {er['funnel']}, mmerror_like {mm['funnel']}.", "",
             "## Reading steps", ""]
    req = er["required"] + mm["required"]
    got = er["required_with_reading"] + mm["required_with_reading"]
    lines += [f"Figure-required rows with a reading step: {got} / {req} = {got / req:.1%} (target >= 90 %).", "",
              "## Phrasings per step kind", ""]
    sizes = {(st, k): len(bank(st, k)) for st in WORDED for k in KINDS}
    lines += ["Bank sizes (every family draws from its style's bank, with its own nouns: what is asked, the "
              "figure, the unit):", "", "| style | " + " | ".join(KINDS) + " |", "|---|" + "---|" * len(KINDS)]
    lines += [f"| {st} | " + " | ".join(str(sizes[(st, k)]) for k in KINDS) + " |" for st in WORDED]
    seen = r["seen"]
    small = sorted((len(v_), key) for key, v_ in seen.items() if len(v_) < 5)
    lines += ["", f"Smallest bank: {min(sizes.values())} phrasings (target >= 5 per step kind in every family). "
              f"Distinct phrasings actually seen per (family, style, kind) in the two runs: {len(seen)} cells, "
              f"median {statistics.median(len(x) for x in seen.values()):.0f}; {len(small)} cells saw fewer "
              "than 5 (few rows of that kind in the sample, not a smaller bank).", "",
              "## Distinct chains", "",
              f"{args.distinct} clean items of {DISTINCT_FAMILY}:", "",
              "| style | distinct chains | distinct phrasing skeletons (math cut out) |", "|---|---|---|"]
    lines += [f"| {st} | {a:.1%} | {b:.1%} |" for st, (a, b) in d.items()]
    lines += ["", "Target: distinct-chain rate >= 95 %.", "", "## Injection sweep, every family and style", "",
              f"{args.sweep} problems per family and difficulty, every subtype that applies; variants kept and "
              "dropped for a label disagreement after the write-up:", "",
              "| style | variants kept | dropped (label disagreement) | visual errors first wrong at a reading "
              "step |", "|---|---|---|---|"]
    for st in STYLES:
        dropped = sum(n for (style, _), n in s["rejected"].items() if style == st)
        reasons = ", ".join(f"{reason} {n}" for (style, reason), n in sorted(s["rejected"].items()) if style == st)
        yes, no = s["visual"][(st, True)], s["visual"][(st, False)]
        share = f"{yes} / {yes + no} = {yes / (yes + no):.1%}" if yes + no else "-"
        lines.append(f"| {st} | {s['kept'][st]} | {dropped}{f' ({reasons})' if reasons else ''} | "
                     f"{share if st != 'worked' else f'- (no reading steps; {share})'} |")
    if s["misses"]:
        lines += ["", "Visual errors whose first wrong step is not a reading step:", "",
                  ", ".join(f"{f} {sub} {n}" for (f, sub), n in sorted(s["misses"].items()))]
    lines += ["", "A misread of a figure parameter no given states (a scale, rise and run counted in squares, a "
              "relation, a bar or a column left out) is read in a reading step of its own (claims "
              "`figure.<param>`, `count(figure.<param>)`, `columns(figure.<param>)`, judged against the parameters "
              "the figure is drawn from), in the clean twin and every variant of the base alike."]
    lines += ["", "## Speed", "",
              f"Quickstart mix, text only, {args.speed} base problems, generation + injection + verification + "
              "write-up (styles re-verify their chains), items per CPU second, median of "
              f"{args.runs} (the styles take turns within each repeat):", "",
              "| style | items/s per core | steps / chain | write-up stage's share of the stage time |",
              "|---|---|---|---|"]
    lines += [f"| {st} | {rate:.0f} | {steps:.2f} | {share:.1%} |" for st, (rate, steps, share) in v.items()]
    lines += ["", "Target: >= 200 items/s per core in every style. CPU time, not wall time; measured while other "
              "work ran on the machine (load above the core count), which slows CPU-bound work too.", ""]
    if args.shortcuts:
        lines += ["## Text shortcut per style", "",
                  "`benchmarks/shortcuts.py --run RUN` (char 1-4-gram TF-IDF + logistic regression, grouped by base, "
                  "ROC AUC of error vs no-error rows from the step texts alone; target <= 0.60) on text-only runs of "
                  "the mmerror_like mix (`mathstress generate` of configs/mmerror_like.yaml with count: 800, render "
                  "and degrade off, generate.solution_style set; generate.concepts_in_words is on by default: "
                  "where a base's conceptual error applies its method, the twin and every variant say their method "
                  "in words in the same slot):",
                  "", "| run | rows | text AUC |", "|---|---|---|"]
        for path in args.shortcuts:
            text = Path(path).read_text(encoding="utf-8")
            auc = re.search(r"text AUC[^:]*: ([0-9.]+)", text)
            rows = re.search(r"rows: (\d+)", text)
            lines.append(f"| {Path(path).stem.removeprefix('probe_')} | {rows.group(1) if rows else '?'} | "
                         f"{auc.group(1) if auc else 'not finished'} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bases", type=int, default=200)
    parser.add_argument("--distinct", type=int, default=1000)
    parser.add_argument("--sweep", type=int, default=2)
    parser.add_argument("--speed", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--shortcuts", nargs="*", default=[],
                        help="outputs of benchmarks/shortcuts.py --run RUN (probe_<name>.txt) to tabulate")
    args = parser.parse_args()
    start = time.perf_counter()
    v = speed(args.speed, args.runs)
    print("speed", v, flush=True)
    r = runs(args.bases)
    print({k: {kk: vv for kk, vv in x.items() if kk != "funnel"} for k, x in r.items() if k != "seen"}, flush=True)
    d = distinct(args.distinct)
    print("distinct", d, flush=True)
    s = sweep(args.sweep)
    print("sweep", dict(s["rejected"]), dict(s["kept"]), dict(s["visual"]), flush=True)
    text = report(args, r, d, s, v, time.perf_counter() - start)
    print(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
