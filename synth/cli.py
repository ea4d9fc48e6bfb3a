"""The `mathstress` command: a thin layer of typer + rich over library functions."""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand

from synth import __version__
from synth.errors import ConfigError, MathstressError, RunError

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode="rich",
                  help="Controlled stress-test sets for multimodal math models.")
console = Console(stderr=True)
out = Console()


class RateColumn(ProgressColumn):
    """Items per second over the whole run so far."""

    def render(self, task: Task) -> Text:
        elapsed = task.elapsed or 0.0
        rate = task.completed / elapsed if elapsed > 0 else 0.0
        return Text(f"{rate:6.1f} items/s", style="cyan")


def progress_bar() -> Progress:
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=False)


def _fail(exc: MathstressError) -> None:
    # Escaped: messages quote user input and install hints like `pip install "mathstress[ocr]"`.
    console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a job scheduler's stop, `kill`), handled as Ctrl-C is."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


@contextmanager
def _stopping(interrupted: str) -> Iterator[None]:
    """Ctrl-C: say ``interrupted`` (what is left on disk) and exit 130 (SIGTERM: the same, exit 143; it ended
    silently); a MathstressError: its one-line error."""
    previous = signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        yield
    except KeyboardInterrupt as exc:
        terminated = isinstance(exc, _Terminated)
        console.print(f"[yellow]{'terminated' if terminated else 'interrupted'}[/]: {interrupted}")
        raise typer.Exit(143 if terminated else 130) from None
    except MathstressError as exc:
        _fail(exc)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _version(value: bool) -> None:
    if value:
        out.print(f"mathstress {__version__}")
        raise typer.Exit()


@app.callback()
def main(version: Annotated[Optional[bool], typer.Option("--version", callback=_version, is_eager=True,
                                                         help="Print the version and exit.")] = None) -> None:
    """Generate, degrade, export and evaluate multimodal math stress-test sets."""


@app.command()
def generate(
    config: Annotated[str, typer.Argument(help="YAML config path, or a packaged config name.")] = "quickstart",
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run folder (default: output.root/name).")] = None,
    workers: Annotated[int, typer.Option(min=1, max=256, help="Worker processes.")] = 1,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted run.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing run folder.")] = False,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N base problems.")] = None,
    executor: Annotated[str, typer.Option(help=(
        "local (a process pool) or dask (needs the dask extra: pip install 'mathstress\\[dask]')."))] = "local",
    scheduler: Annotated[Optional[str], typer.Option(
        help="With --executor dask: a running scheduler, tcp://HOST:PORT (default: a local cluster).")] = None,
) -> None:
    """Generate a run folder: manifest.jsonl, images/, stats.json, config.yaml."""
    from synth.config import load_config
    from synth.pipeline import run
    from synth.run_notes import unfilled
    from synth.rundir import LOCK_NAME
    from synth.safepath import folder_kind, prepare_output_dir

    with _stopping("finished shards are kept; re-run with --resume to continue"):
        cfg = load_config(config)
        if limit is not None:  # the first bases of the whole run's plan (the config's own limit gives way)
            cfg = cfg.model_copy(update={"limit": limit if limit < cfg.count else None})
        run_dir = out_dir or Path(cfg.output.root) / cfg.name
        # Said before any progress bar starts (the pipeline refuses them too, once the bar is up): a folder that is
        # not a run, whatever was asked, and a run without --resume or --overwrite.
        if resume and overwrite:
            raise ConfigError("--resume continues a run and --overwrite replaces it; pass one of them")
        try:
            held = run_dir.is_dir() and any(p.name != LOCK_NAME for p in run_dir.iterdir())  # the lock: a run starting
        except OSError as exc:  # a name too long, a folder this user may not list
            raise ConfigError(f"--out {str(run_dir)!r}: {exc.strerror}; choose another --out") from None
        kind = folder_kind(run_dir) if held else None
        if held and kind != "run":  # a copy of a run's config.yaml in a user's folder proves nothing (--resume)
            prepare_output_dir(run_dir, "run")
        if not (resume or overwrite) and kind == "run":
            raise RunError(f"{run_dir} already holds a run; pass --resume to continue it, --overwrite to replace "
                           "it, or --out to write elsewhere")
        with progress_bar() as bar:
            task = bar.add_task(f"generate {cfg.name}", total=None)

            def update(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            result = run(cfg, run_dir, workers=workers, resume=resume, overwrite=overwrite, progress=update,
                         executor=executor, scheduler=scheduler)
            bar.update(task, completed=result.items, total=result.items)
    grouped: dict[str, list[int]] = {}
    for shard, why in result.redone.items():  # one line per reason: a lost checksums file names every shard
        grouped.setdefault(why, []).append(shard)
    for why, shards in grouped.items():
        console.print(f"[yellow]redone:[/] {_shard_list(shards)}: {escape(why)}", highlight=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"[yellow]repaired:[/] {escape(note)}", highlight=False, soft_wrap=True)
    for note in result.plan:  # what the quota plan could not do as asked (also in stats.json)
        console.print(f"[yellow]plan:[/] {escape(note)}", highlight=False, soft_wrap=True)
    for severe, line in unfilled(result.run_dir):
        label = "[yellow]warning:[/]" if severe else "note:"
        console.print(f"{label} {escape(line)}", highlight=False, soft_wrap=True)
    resumed = f" ({result.resumed_shards} of {result.shards} shards resumed)" if result.resumed_shards else ""
    out.print(f"wrote {result.items} items to {result.run_dir}{resumed} in {result.seconds:.1f} s")


def _shard_list(shards: list[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``shards 0-2, 5``."""
    spans: list[list[int]] = []
    for s in sorted(shards):
        if spans and s == spans[-1][1] + 1:
            spans[-1][1] = s
        else:
            spans.append([s, s])
    text = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in spans)
    return f"shard {text}" if len(shards) == 1 else f"shards {text}"


class _ExportCommand(TyperCommand):
    """`mathstress export --help` lists the formats in the registry (read only when help is shown)."""

    def format_help(self, ctx, formatter):  # noqa: ANN001, ANN201 - click's signature
        from synth.exports import EXPORTS

        for param in self.params:
            if param.name == "fmt":
                param.help = "Export format: " + "; ".join(f"[bold]{f}[/]: {escape(EXPORTS[f].help)}" for f in EXPORTS)
        return super().format_help(ctx, formatter)


@app.command(cls=_ExportCommand)
def export(
    run_dir: Annotated[Path, typer.Argument(help="A finished run folder.")],
    fmt: Annotated[str, typer.Option("--format", help="Export format (the registered formats).")] = "hf",
    out_dir: Annotated[Optional[Path], typer.Option("--out", help=(
        "Destination folder (default: RUN/<format>): new, empty, or an earlier export of the same format."))] = None,
    anonymize: Annotated[bool, typer.Option("--anonymize", help=(
        "Opaque ids and image names (item-000123) in a shuffled order, so names do not tell clean from error "
        "or photo; OUT.key.csv beside the export maps them back."))] = False,
) -> None:
    """Export a run in another layout: Hugging Face datasets, or a benchmark's own layout.

    Each benchmark format is the layout that benchmark's public code reads; summary.json in the
    export lists what was written and skipped, the differences that remain, and the commands that
    run the benchmark's code on it. Nothing is published unless the whole export was written.
    """
    from synth.exports import export_run, get_exporter, read_summary

    with _stopping("nothing was published; the destination is unchanged"):
        get_exporter(fmt)  # an unknown format is refused before the progress bar starts
        with progress_bar() as bar:
            task = bar.add_task(f"export {fmt}", total=None)
            dest = export_run(run_dir, fmt, out_dir, anonymize=anonymize,
                              progress=lambda done, total: bar.update(task, completed=done, total=total))
    out.print(f"exported {run_dir} as {fmt} to {dest}")
    if anonymize:
        out.print(f"key (anonymous id -> id): {dest.parent / (dest.name + '.key.csv')}", highlight=False)
    summary = read_summary(dest)
    out.print(f"{summary['written']} records from {summary['items']} items, {summary['images']} images")
    for reason, n in summary["skipped"].items():
        out.print(f"  skipped {n}: {reason}", highlight=False)
    for note, n in summary["notes"].items():
        out.print(f"  note {n}: {note}", highlight=False)
    for line in summary.get("run_their_code", []):
        out.print(f"  run: {line}", highlight=False, markup=False, soft_wrap=True)


@app.command()
def worksheet(
    config: Annotated[str, typer.Argument(help="YAML config path, or a packaged config name.")] = "quickstart",
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", help="Folder for the PDFs (default: output.root/<name>-worksheets).")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N base problems.")] = None,
    page: Annotated[str, typer.Option(help="Paper size: a4 or letter.")] = "a4",
) -> None:
    """Print PDF worksheets for a config: problems, a copy-by-hand pack and an answer key.

    Item ids match `mathstress generate` with the same config, so photos of filled-in pages can
    be joined to the run's labels (index.json says which id is on which page).
    """
    from synth.config import load_config
    from synth.worksheets import build_worksheets

    with _stopping("the worksheet folder may hold some of the PDFs"):
        cfg = load_config(config)
        dest = out_dir or Path(cfg.output.root) / f"{cfg.name}-worksheets"
        count = cfg.bases if limit is None else min(limit, cfg.count)
        # The library reports no steps, so the bar pulses with the elapsed time instead of counting.
        with Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            bar.add_task(f"worksheets for {count} problems of {cfg.name}", total=None)
            result = build_worksheets(cfg, dest, limit=limit, page=page)
    for pack, path in result.files.items():
        n = result.pages[pack]
        out.print(f"wrote {path} ({n} page{'' if n == 1 else 's'})")
    out.print(f"{result.problems} problems, {result.copies} solutions to copy; ids per page in {dest / 'index.json'}")
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)


@app.command()
def show(
    run_dir: Annotated[Path, typer.Argument(help="A finished run folder.")],
    item_id: Annotated[str, typer.Argument(help="The item id (see manifest.jsonl).")],
    out_file: Annotated[Optional[Path], typer.Option("--out", help="PNG file path (default: RUN/show/ID.png).")] = None,
) -> None:
    """Write a contact sheet PNG: the item, its clean twin, and its labels."""
    from synth.show import contact_sheet

    try:
        path = contact_sheet(run_dir, item_id, out_file)
    except MathstressError as exc:
        _fail(exc)
    out.print(f"wrote {path}")


@app.command("check-families")
def check_families(
    family: Annotated[Optional[list[str]], typer.Option(help="Family id (repeat); default: every family.")] = None,
    seeds: Annotated[int, typer.Option(min=1, help="Problems per family and difficulty.")] = 30,
    failures: Annotated[int, typer.Option(min=0, help="Failures to show per family.")] = 3,
) -> None:
    """The generator acceptance bar per family: verification, parse-back, repeats, graded difficulty."""
    from synth.generators import REGISTRY
    from synth.generators.acceptance import check_family

    ids = family or sorted(REGISTRY)
    unknown = [f for f in ids if f not in REGISTRY]
    if unknown:
        _fail(ConfigError(f"--family: unknown family {unknown[0]!r}{REGISTRY.near(unknown[0])} (`mathstress taxonomy "
                          "--families` lists them)"))
    table = Table()
    for header in ("family", "steps e/m/h", "size e/m/h", "dup %", "graded"):
        table.add_column(header, no_wrap=True)
    table.add_column("failures")
    bad = 0
    with progress_bar() as bar:
        task = bar.add_task("check families", total=len(ids))
        for fid in ids:
            r = check_family(fid, seeds)
            table.add_row(fid, "/".join(f"{lv.mean_steps:.1f}" for lv in r.levels),
                          "/".join(f"{lv.mean_magnitude:.1f}" for lv in r.levels), f"{100 * r.duplicate_rate:.1f}",
                          "yes" if r.graded else "NO",
                          "\n".join([str(len(r.failures))] + [escape(f) for f in r.failures[:failures]]))
            bad += bool(r.failures) or not r.graded
            bar.advance(task)
    out.print(table)
    out.print(f"{len(ids)} famil{'y' if len(ids) == 1 else 'ies'}, {bad} with findings")
    if bad:
        raise typer.Exit(1)


def narrow_table(title: str | None = None, caption: str | None = None) -> Table:
    """A table that fits 80 columns: a rule under the header, one space between columns, no outer padding."""
    return Table(title=title, caption=caption, box=box.SIMPLE_HEAD, show_edge=False, padding=0,
                 title_justify="left", caption_justify="left")


def _print_json(value: object) -> None:
    out.print_json(json.dumps(value, ensure_ascii=False, default=str), indent=2, highlight=False)


@app.command()
def taxonomy(
    families: Annotated[bool, typer.Option("--families", help="List problem families instead.")] = False,
    degradations: Annotated[bool, typer.Option("--degradations", help="List degradation subtypes.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON instead of a table.")] = False,
) -> None:
    """Print the error taxonomy with its benchmark projections (or the families / degradations).

    Every row and count comes from the registries: the ops' own rubrics, the injectors, the families'
    mal-rule catalogues.
    """
    from synth.taxonomy import ERROR_SUBTYPES

    if families and degradations:  # only the families were printed
        _fail(ConfigError("give --families or --degradations, not both (one listing at a time)"))
    if families:
        rows = _family_rows()
        if as_json:
            _print_json(rows)
            return
        width = max(len(r["family"]) for r in rows)
        table = narrow_table("Problem families", f"{len(rows)} families; second line: domain and an easy example")
        table.add_column("family", min_width=width)   # ids never fold: the column is as wide as the longest
        table.add_column("figure", no_wrap=True)
        table.add_column("question types", max_width=len("free, mcq,"))
        table.add_column("image roles", min_width=len("not_required"))
        for r in rows:
            table.add_row(Text.assemble(r["family"], ("\n" + f"{r['domain']} · {r['example']}", "dim")),
                          r["figure"] or "—", ", ".join(r["question_types"]), ", ".join(r["image_roles"]))
        out.print(table)
        return
    if degradations:
        from perturb.photo import degradation_subtypes

        drows = degradation_subtypes()
        if as_json:
            _print_json([{"family": d.family, "subtype": d.subtype, "levels": d.levels} for d in drows])
            return
        table = narrow_table("Photographic degradations (severity 0 = identity)",
                             f"{len(drows)} ops; each severity is graded on the measured quantity shown")
        table.add_column("family", no_wrap=True)
        table.add_column("subtype", no_wrap=True)
        table.add_column("severity 1 / 2 / 3 (measured)")
        for d in drows:
            table.add_row(d.family, d.subtype, d.levels)
        out.print(table)
        return
    from perturb.reasoning import REGISTRY as INJECTORS
    from perturb.reasoning.conceptual import malrule_counts
    from synth.taxonomy import RETIRED

    rules = malrule_counts()
    rows = [{"family": s.family, "subtype": s.subtype, "errorradar": s.errorradar, "fermat": s.fermat,
             "mmerror": s.mmerror, "injector": s.subtype in INJECTORS} for s in ERROR_SUBTYPES]
    if as_json:
        _print_json({"subtypes": rows, "malrules": dict(rules.most_common())})
        return
    by_subtype = ", ".join(f"{subtype} {n}" for subtype, n in rules.most_common())
    table = narrow_table("Reasoning-error taxonomy and projections",
                         f"{sum(r['injector'] for r in rows)} of {len(rows)} subtypes have an injector; the "
                         f"families' catalogues hold {sum(rules.values())} mal-rules ({by_subtype})")
    for col in ("family", "subtype", "ErrorRadar", "FERMAT", "MMErroR", "injector"):
        table.add_column(col, no_wrap=True)
    for r in rows:
        table.add_row(r["family"], r["subtype"], r["errorradar"] or "—", r["fermat"] or "—", r["mmerror"] or "—",
                      "yes" if r["injector"] else "retired" if r["subtype"] in RETIRED else "planned")
    out.print(table)


def _family_rows() -> list[dict]:
    import numpy as np

    from synth.generators import REGISTRY, get_family

    rows = []
    for fid in sorted(REGISTRY):
        fam = get_family(fid)
        example = fam.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="example")
        rows.append({"family": fid, "domain": fam.domain, "figure": fam.figure_kind,
                     "question_types": list(fam.question_types), "image_roles": list(fam.image_roles),
                     "example": example.question_text})
    return rows


_REFERENCE = re.compile(r"\s*\((?:[^()]*(?:arXiv|\.md)[^()]*)\)")


def config_purpose(path: Path) -> str:
    """A config's one-line purpose: the first sentence of its leading comment, references left out."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    text = _REFERENCE.sub("", " ".join(lines)).strip()
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence.rstrip(".")


@app.command("configs")
def list_configs(
    as_json: Annotated[bool, typer.Option("--json", help="Print name, path and purpose as JSON.")] = False,
) -> None:
    """List the packaged configs with their purpose (usable by name: `mathstress generate quickstart`)."""
    from synth.resources import packaged_configs, resource_dir

    rows = [{"name": name, "purpose": config_purpose(resource_dir("configs") / f"{name}.yaml"),
             "path": str(resource_dir("configs") / f"{name}.yaml")} for name in packaged_configs()]
    if as_json:
        _print_json(rows)
        return
    table = narrow_table("Packaged configs", f"files in {resource_dir('configs')}; "
                                             "run one with `mathstress generate NAME`")
    table.add_column("name", no_wrap=True)
    table.add_column("purpose")
    for r in rows:
        table.add_row(r["name"], r["purpose"])
    out.print(table)


class _EvalCommand(TyperCommand):
    """`mathstress eval --help` lists the tasks and models in the registries (read only when help is shown)."""

    def format_help(self, ctx, formatter):  # noqa: ANN001, ANN201 - click's signature
        from synth.evaluate import MODELS, TASKS
        from synth.evaluate.models import summary

        listed = {"task": "; ".join(f"[bold]{t}[/]: {escape(TASKS[t].summary)}" for t in TASKS),
                  "model": "; ".join(f"[bold]{m}[/]: {escape(summary(MODELS[m]))}" for m in MODELS)}
        for param in self.params:
            if param.name == "task":
                param.help = f"Tasks (repeat or comma-list): {listed['task']}."
            elif param.name == "model":
                param.help = f"Model (default ocr-verifier; it needs the ocr extra): {listed['model']}."
        return super().format_help(ctx, formatter)


@app.command("eval", cls=_EvalCommand)
def eval_command(
    run_dir: Annotated[Path, typer.Argument(help="A finished run folder.")],
    task: Annotated[list[str], typer.Option("--task", help="Tasks (repeat or comma-list; the registered tasks).")],
    model: Annotated[str, typer.Option("--model", help="Model (the registered adapters).")] = "ocr-verifier",
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint URL.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=512, help="Model calls in flight.")] = 8,
    runs: Annotated[int, typer.Option(min=1, max=100, help="Repeats per item (run index is in the cache key).")] = 1,
    retry_errors: Annotated[bool, typer.Option("--retry-errors/--no-retry-errors", help=(
        "Call again the failures an earlier run stored (failures are never scored as answers)."))] = True,
    fail_on_error: Annotated[float, typer.Option("--fail-on-error", min=0, help=(
        "Exit 4 when a task's failed calls reach this: a proportion of its calls if < 1, a count if >= 1 "
        "(as inspect-ai). Default 1: any call left failed."))] = 1.0,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Output folder (default: RUN/eval/<model>).")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help=(
        "Only N base problems, each with all its variants, taken in turn from each family."))] = None,
    input_mode: Annotated[str, typer.Option("--input", help=(
        "image (the page) or text (no image: steps as text; question only for solve and solvable)."))] = "image",
    seed: Annotated[int, typer.Option(help=(
        "Seed of the random baseline and of the bootstrap; an endpoint is sent seed + run index."))] = 0,
    temperature: Annotated[float, typer.Option(min=0, max=2, help=(
        "Sampling temperature (with --runs K > 1 and a temperature > 0, the runs measure stability)."))] = 0.0,
    max_tokens: Annotated[int, typer.Option(min=1, help="Longest reply asked for, in tokens.")] = 1024,
    max_tokens_param: Annotated[str, typer.Option(help=(
        "The field --max-tokens is sent as: max_tokens, max_completion_tokens, or auto (max_completion_tokens for "
        "o-series and gpt-5 names, and whichever the endpoint accepts when it refuses one)."))] = "auto",
    top_p: Annotated[Optional[float], typer.Option(min=0, max=1, help="Nucleus sampling mass (not sent if unset).")
    ] = None,
    extra_body: Annotated[Optional[str], typer.Option(help=(
        "More request fields as a JSON object, e.g. '{\"top_k\": 20}' (part of the cache key)."))] = None,
    rpm: Annotated[Optional[float], typer.Option(help=(
        "At most this many calls per minute (> 0), spread evenly, across every task of the run."))] = None,
    tpm: Annotated[Optional[float], typer.Option(help=(
        "At most this many tokens (prompt + reply) per minute (> 0), across every task of the run."))] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON instead of a table.")] = False,
    max_retries: Annotated[int, typer.Option(min=0, max=50, help="HTTP retries per call (openai client).")] = 6,
    timeout: Annotated[float, typer.Option(min=1, help=(
        "Seconds the endpoint may stay silent (connecting, each read) before the client retries."))] = 120.0,
    deadline: Annotated[float, typer.Option(min=1, help=(
        "Seconds one call may take in all: retries and their waits, and reading the reply."))] = 300.0,
    price_in: Annotated[Optional[float], typer.Option(
        "--price-in", min=0, help="US dollars per million prompt tokens (cost when the endpoint reports none).")
    ] = None,
    price_out: Annotated[Optional[float], typer.Option(
        "--price-out", min=0, help="US dollars per million completion tokens.")] = None,
) -> None:
    """Evaluate a model on a run folder; re-running the same command resumes from the cache.

    Writes cache.sqlite, responses/<task>.jsonl and results.json. The API key is read from
    OPENAI_API_KEY only and never written. Exits 4 when more calls are left failed than
    --fail-on-error tolerates; their reasons are printed and stored.
    """
    from synth.evaluate import evaluate_run, get_model, get_task
    from synth.evaluate.results import mixed_limits
    from synth.evaluate.runner import check_failures, failure_limit

    with _stopping("answers so far are cached; re-run the same command to resume"):
        failure_limit(fail_on_error, 1)   # a bad tolerance is refused before any call is made
        task_ids = [t.strip() for value in task for t in value.split(",") if t.strip()]
        tasks = [get_task(t) for t in dict.fromkeys(task_ids)]
        adapter = get_model(model, base_url=base_url, seed=seed, max_retries=max_retries, timeout=timeout,
                            deadline=deadline, price_in=price_in, price_out=price_out, temperature=temperature,
                            max_tokens=max_tokens, max_tokens_param=max_tokens_param, top_p=top_p,
                            extra_body=extra_body)
        with progress_bar() as bar:
            bars: dict[str, int] = {}

            def update(task_id: str, c) -> None:  # c: synth.evaluate.Counts
                if task_id not in bars:
                    bars[task_id] = bar.add_task(task_id, total=c.total)
                cost = "" if c.cost is None else f" · ${c.cost:.4f}"
                bar.update(bars[task_id], completed=c.done, total=c.total,
                           description=f"{task_id} [dim]cached {c.cached} · failed {c.failed}{cost}[/]")

            result = evaluate_run(run_dir, adapter, tasks, out_dir=out_dir, runs=runs, concurrency=concurrency,
                                  retry_errors=retry_errors, limit=limit, input_mode=input_mode, seed=seed,
                                  rpm=rpm, tpm=tpm, progress=update)
    if as_json:
        _print_json(eval_summary(result))
    else:
        out.print(eval_table(result, title=f"{adapter.id} on {run_dir}"))
        costs = [f"{tid} ${c.cost:.4f}" for tid, c in result.counts.items() if c.cost is not None]
        if costs:
            out.print("cost: " + ", ".join(costs))
        out.print(f"wrote {result.out_dir / 'results.json'} (report: mathstress report {result.out_dir})")
        for tid, why in result.skipped.items():
            console.print(f"[yellow]note:[/] the {tid} task was left out: it {escape(why)}", highlight=False,
                          soft_wrap=True)
        mixed = mixed_limits(result.results)
        if mixed:
            said = ", ".join(f"{k} {'the whole run' if v is None else f'--limit {v}'}" for k, v in mixed.items())
            console.print(f"[yellow]warning:[/] {result.out_dir / 'results.json'} now holds tasks scored on different "
                          f"items ({said}): their numbers and any comparison of them are not of the same items; "
                          "evaluate with the same --limit, or write to another --out", highlight=False, soft_wrap=True)
        for tid in result.counts:
            reasons = result.failures(tid)
            if reasons:
                console.print(f"[yellow]{tid}: failed calls by reason[/]")
                for reason, n in reasons[:8]:
                    console.print(f"  {n} x {escape(reason)}", highlight=False, soft_wrap=True)
                if len(reasons) > 8:
                    console.print(f"  ... and {len(reasons) - 8} more reasons (responses/{tid}.jsonl)")
    try:
        check_failures(result, fail_on_error=fail_on_error)
    except MathstressError as exc:
        _fail(exc)


_SHORT_METRIC = {"balanced_accuracy": "bal. acc", "accuracy": "acc", "macro_f1": "macro F1", "f1": "PB F1",
                 "cer": "CER", "loose_accuracy": "loose acc"}


def eval_table(result, *, title: str) -> Table:  # noqa: ANN001 - synth.evaluate.EvalResult, imported lazily
    """One row per task: calls answered, failed and cached, then its headline metric with the 95 % interval."""
    table = narrow_table(title, "headline: as in results.json's summary (every metric is in the report)")
    table.add_column("task", no_wrap=True)
    for col in ("ok", "failed", "cached"):
        table.add_column(col, justify="right", no_wrap=True)
    table.add_column("headline", no_wrap=True)
    for col in ("value", "95 % CI", "unparsed"):
        table.add_column(col, justify="right", no_wrap=True)
    for tid in result.counts:
        t = result.results["tasks"][tid]
        c, h = t["counts"], t.get("headline") or {}
        ci = h.get("ci95")
        table.add_row(tid, str(c["answered"]), str(c["failed"]), str(c["cached"]),
                      _SHORT_METRIC.get(h.get("metric"), h.get("metric") or "—"),
                      f"{h['value']:.3f}" if h else "—", f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "—",
                      str(t["metrics"].get("unparsed", 0)))
    return table


def eval_summary(result) -> dict:  # noqa: ANN001 - synth.evaluate.EvalResult
    """What `mathstress eval --json` prints: per task its counts, headline, main metrics and failure reasons."""
    keys = ("n", "unparsed", "accuracy", "balanced_accuracy", "macro_f1", "f1", "loose_accuracy", "cer")
    return {"out_dir": str(result.out_dir), "results": str(result.out_dir / "results.json"),
            "model": result.results["model"],
            "tasks": {tid: {"counts": t["counts"], "headline": t.get("headline"),
                            "metrics": {k: t["metrics"][k] for k in keys if k in t["metrics"]},
                            "failures": t.get("failures", [])}
                      for tid, t in result.results["tasks"].items() if tid in result.counts},
            "skipped_tasks": result.skipped}


@app.command("report")
def report_command(
    eval_dir: Annotated[Optional[Path], typer.Argument(help=(
        "An evaluation folder (RUN/eval/<model>); with --from-inspect, where to write it "
        "(default RUN/eval/inspect-<model>)."))] = None,
    compare: Annotated[Optional[list[Path]], typer.Option(
        "--compare", help="Another evaluation folder of the same run: adds Cohen's kappa (repeatable).")] = None,
    price_in: Annotated[Optional[float], typer.Option(
        "--price-in", min=0, help="US dollars per million prompt tokens: recompute the cost from the stored usage.")
    ] = None,
    price_out: Annotated[Optional[float], typer.Option(
        "--price-out", min=0, help="US dollars per million completion tokens (with --price-in).")] = None,
    from_inspect: Annotated[Optional[Path], typer.Option(
        "--from-inspect", help=("inspect-ai's log folder of `inspect eval mathstress/<task>` runs: rebuild the "
                                "evaluation (paired deltas, intervals, worst case) from its logs first."))] = None,
    run: Annotated[Optional[Path], typer.Option(
        "--run", help="With --from-inspect: the run folder, if it moved since the logs were written.")] = None,
    fermat: Annotated[Optional[Path], typer.Option(
        "--fermat", help=("The CSV FERMAT's own fill_in_csv.py wrote for our fermat export: print its ED, EL and EC "
                          "scores (the scorer `python -m synth.fermat_score` runs)."))] = None,
    gold: Annotated[Optional[Path], typer.Option(
        "--gold", help="With --fermat: the export's fermat.csv (items the run left out count wrong).")] = None,
) -> None:
    """Write report.md and report.html (plots and a per-item viewer) from an evaluation folder's results.json."""
    from synth.evaluate import write_report
    from synth.evaluate.inspect_logs import results_from_inspect

    if fermat is not None:
        from synth.exports.fermat import score_fermat, score_lines

        with _stopping("nothing was written"):
            for path in (fermat, gold):
                if path is not None and not path.is_file():
                    raise ConfigError(f"--fermat/--gold: {path} is not a file")
            try:
                scores = score_fermat(fermat, gold)
            except (KeyError, ValueError) as exc:
                raise ConfigError(f"{gold or fermat} is not a FERMAT CSV of a mathstress export ({exc}); pass the "
                                  "CSV fill_in_csv.py wrote and the export's fermat.csv") from None
        out.print("\n".join(score_lines(scores)))
        return
    with _stopping("nothing is half-written (each file is replaced whole when done)"):
        if from_inspect is not None:
            eval_dir = results_from_inspect(from_inspect, out_dir=eval_dir, run_dir=run).out_dir
            out.print(f"rebuilt {eval_dir / 'results.json'} from the inspect logs in {from_inspect}")
        elif eval_dir is None:
            raise ConfigError("give an evaluation folder (RUN/eval/<model>), or --from-inspect LOGDIR")
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                      console=console, transient=True) as bar:
            steps = bar.add_task("report", total=None)

            def update(step: str, done: int, total: int) -> None:
                bar.update(steps, completed=done, total=total, description=f"report: {step}")

            path = write_report(eval_dir, compare=compare or (), price_in=price_in, price_out=price_out,
                                progress=update)
    out.print(f"wrote {path} and {path.with_name('report.html')}")


@app.command("degrade")
def degrade_command(
    input_path: Annotated[Path, typer.Argument(help=(
        "A folder of images (with an optional metadata.jsonl), a dataset saved with save_to_disk, a .parquet "
        "file with an image column, or a mathstress run."))],
    out_dir: Annotated[Path, typer.Option("--out", help="The run folder to write (manifest.jsonl, images/...).")],
    ops: Annotated[Optional[str], typer.Option(
        "--ops", help="Ops and severities, e.g. blur:2,tilt:1 (a bare op name: each of its severities).")] = None,
    profile: Annotated[Optional[list[str]], typer.Option(
        "--profile", help="A packaged capture profile, e.g. desk_lamp_tilted (repeatable).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", help=(
        "YAML: name, seed, dpi, degrade.ops / degrade.profiles (as in a run config), image_column, "
        "question_column, answer_column, id_column, split, max_pixels, max_bytes, shard_size."))] = None,
    seed: Annotated[Optional[int], typer.Option(min=0, help="Run seed (default 0): same seed, same photos.")] = None,
    name: Annotated[Optional[str], typer.Option(help="Id prefix of the items (default external).")] = None,
    dpi: Annotated[Optional[int], typer.Option(help="Resolution the ops assume for a source image (150).")] = None,
    image_column: Annotated[Optional[str], typer.Option(help="Dataset column holding the image.")] = None,
    question_column: Annotated[Optional[str], typer.Option(help="Column with the question text.")] = None,
    answer_column: Annotated[Optional[str], typer.Option(help="Column with the gold answer (for eval).")] = None,
    id_column: Annotated[Optional[str], typer.Option(help="Column with the source's own id (recorded).")] = None,
    split: Annotated[Optional[str], typer.Option(help="Split of a saved DatasetDict.")] = None,
    max_pixels: Annotated[Optional[int], typer.Option(
        help="Larger images are refused per item before decoding (default 36,000,000).")] = None,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N source images.")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue an interrupted run.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an earlier run in --out.")] = False,
) -> None:
    """Degrade images you already have: each gets a clean control and one photo per op x severity and profile.

    Writes a run folder that `mathstress eval` (solve and solvable, given an answer column) and `report`
    read. An image that cannot be read is one item's failure (stats.json says why) and the rest goes on;
    ops that need our layout boxes or the problem's words are skipped and counted.
    """
    from synth.degrade_external import degrade_external, load_external_config
    with _stopping("finished shards are kept; re-run with --resume to continue"):
        cfg = load_external_config(config, ops=ops, profiles=profile, seed=seed, name=name, dpi=dpi,
                                   image_column=image_column, question_column=question_column,
                                   answer_column=answer_column, id_column=id_column, split=split,
                                   max_pixels=max_pixels, limit=limit)
        with progress_bar() as bar:
            task = bar.add_task(f"degrade {input_path.name}", total=None)
            result = degrade_external(input_path, out_dir, cfg, resume=resume, overwrite=overwrite,
                                      progress=lambda done, total: bar.update(task, completed=done, total=total))
    for shard, why in sorted(result.redone.items()):
        console.print(f"[yellow]redone:[/] shard {shard}: {escape(why)}", highlight=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"[yellow]repaired:[/] {escape(note)}", highlight=False, soft_wrap=True)
    for key, n in result.skipped.items():
        why = result.reasons.get(key.split(":")[0] if not key.startswith("profile:") else key, "")
        console.print(f"[yellow]skipped[/] {key} on {n} image{'s' * (n != 1)}: {escape(why)}", highlight=False,
                      soft_wrap=True)
    for failure in result.failures[:10]:
        where = failure["source"].get("path") or failure["source"].get("id") or f"row {failure['source'].get('row')}"
        console.print(f"[yellow]failed[/] {escape(str(where))}: {escape(failure['reason'])}", highlight=False,
                      soft_wrap=True)
    if result.failed > 10:
        console.print(f"  ... {result.failed - 10} more failures are listed in {result.run_dir / 'stats.json'}")
    if result.sources == 0 and result.failed:
        _fail(RunError(f"none of the {result.failed} source images could be degraded (reasons above and in "
                       f"{result.run_dir / 'stats.json'})"))
    out.print(f"wrote {result.items} items from {result.sources} {result.kind} images to {result.run_dir} "
              f"({result.failed} failed) in {result.seconds:.1f} s")


@app.command("inject-external")
def inject_external_command(
    data: Annotated[Path, typer.Argument(help=(
        "Problems: a .jsonl file (question, answer, optional solution and image path) or a dataset saved with "
        "save_to_disk. A GSM8K answer (steps, then '#### 72') gives both the solution and the answer."))],
    out_dir: Annotated[Path, typer.Option("--out", help="Output folder: injected.jsonl, stats.json, cache.sqlite.")],
    contract: Annotated[str, typer.Option(help="mmerror (write a solution with one typed error) or fermat "
                                               "(perturb the reference solution by one type).")],
    model: Annotated[str, typer.Option(help=(
        "openai:<model> (any OpenAI-compatible endpoint) or offline (our slips and operator swaps on "
        "reference solutions whose calculations parse, labels from our verifier)."))] = "offline",
    base_url: Annotated[Optional[str], typer.Option("--base-url", help="OpenAI-compatible endpoint URL.")] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the offline edits, FERMAT's type draw and the model.")] = 0,
    attempts: Annotated[int, typer.Option(min=1, max=20, help="Replies asked per problem until one is kept.")] = 1,
    types: Annotated[Optional[str], typer.Option(help=(
        "fermat: the types to ask for (default CO,CP,NO); offline makes CO (slips) and NO (operator swaps), and "
        "--types chooses among them."))] = None,
    concurrency: Annotated[int, typer.Option(min=1, max=256, help="Model calls in flight.")] = 4,
    limit: Annotated[Optional[int], typer.Option(min=1, help="Only the first N problems.")] = None,
    id_field: Annotated[str, typer.Option(help="Field with the problem's id.")] = "id",
    question_field: Annotated[str, typer.Option(help="Field with the question.")] = "question",
    answer_field: Annotated[str, typer.Option(help="Field with the gold answer.")] = "answer",
    solution_field: Annotated[str, typer.Option(help="Field with a reference solution.")] = "solution",
    image_field: Annotated[str, typer.Option(help="Field with the image (a path beside the file, or bytes).")
                           ] = "image",
    temperature: Annotated[float, typer.Option(min=0, max=2, help="Sampling temperature of the model.")] = 0.7,
    max_tokens: Annotated[int, typer.Option(min=64, help="Longest reply asked for.")] = 2048,
    fail_on_error: Annotated[float, typer.Option("--fail-on-error", min=0, help=(
        "Exit 4 when failed calls reach this: a proportion of the calls if < 1, a count if >= 1."))] = 1.0,
    max_retries: Annotated[int, typer.Option(min=0, max=50, help="HTTP retries per call (openai client).")] = 6,
    timeout: Annotated[float, typer.Option(min=1, help="Seconds the endpoint may stay silent.")] = 120.0,
    deadline: Annotated[float, typer.Option(min=1, help="Seconds one call may take in all.")] = 300.0,
) -> None:
    """Plant one labelled error in solutions you already have, checked before it is kept; re-running resumes.

    Every reply must be well formed, carry one of the contract's labels, end on an answer other than the
    gold one and never mention the error; where its calculations parse, our verifier locates the first
    false step. The funnel is printed and kept in stats.json; replies and failures are in cache.sqlite.
    """
    from synth.inject_external import Fields, check_call_failures, funnel_table, inject_external

    fields = Fields(id=id_field, question=question_field, answer=answer_field, solution=solution_field,
                    image=image_field)
    stopped = ("the rows written so far stay; re-run the same command to redo the rest" if model == "offline" else
               "replies so far are cached; re-run the same command to resume")
    with _stopping(stopped):
        with progress_bar() as bar:
            task = bar.add_task(f"inject-external {contract}", total=None)
            result = inject_external(
                data, out_dir, contract=contract, model=model, base_url=base_url, fields=fields, seed=seed,
                attempts=attempts, types=[t.strip() for t in types.split(",") if t.strip()] if types else None,
                concurrency=concurrency, limit=limit, max_retries=max_retries, timeout=timeout, deadline=deadline,
                temperature=temperature, max_tokens=max_tokens,
                progress=lambda done, total: bar.update(task, completed=done, total=total))
    table = Table(title=f"{contract} funnel ({model})")
    table.add_column("stage")
    table.add_column("count", justify="right")
    for stage, n in funnel_table(result.funnel):
        table.add_row(escape(stage), str(n))
    out.print(table)
    for reason, n in list(result.funnel["failed_by_reason"].items())[:8]:
        console.print(f"  failed {n} x {escape(reason)}", highlight=False, soft_wrap=True)
    out.print(f"wrote {result.rows} row{'s' * (result.rows != 1)} to {result.out_dir / 'injected.jsonl'}")
    try:
        check_call_failures(result, fail_on_error=fail_on_error)
    except MathstressError as exc:
        _fail(exc)
