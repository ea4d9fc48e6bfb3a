"""The `mathstress` command: a thin layer of typer + rich over library functions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from synth import __version__
from synth.errors import MathstressError

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
    console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


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
) -> None:
    """Generate a run folder: manifest.jsonl, images/, stats.json, config.yaml."""
    from synth.config import load_config
    from synth.pipeline import run

    try:
        cfg = load_config(config)
        if limit is not None and limit < cfg.count:
            cfg = cfg.model_copy(update={"count": limit})
        run_dir = out_dir or Path(cfg.output.root) / cfg.name
        with progress_bar() as bar:
            task = bar.add_task(f"generate {cfg.name}", total=None)

            def update(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            result = run(cfg, run_dir, workers=workers, resume=resume, overwrite=overwrite, progress=update)
            bar.update(task, completed=result.items, total=result.items)
    except KeyboardInterrupt:
        console.print("[yellow]interrupted[/]: finished shards are kept; re-run with --resume to continue")
        raise typer.Exit(130) from None
    except MathstressError as exc:
        _fail(exc)
    resumed = f" ({result.resumed_shards} of {result.shards} shards resumed)" if result.resumed_shards else ""
    out.print(f"wrote {result.items} items to {result.run_dir}{resumed} in {result.seconds:.1f} s")


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="A finished run folder.")],
    fmt: Annotated[str, typer.Option("--format", help="Export format.")] = "hf",
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Destination (default: RUN/<format>).")] = None,
) -> None:
    """Export a run in another layout (hf: a Hugging Face `datasets` dataset with Image features)."""
    from synth.export import EXPORTERS, export_run

    if fmt not in EXPORTERS:
        console.print(f"[bold red]error:[/] --format must be one of {sorted(EXPORTERS)}, got {fmt!r}", soft_wrap=True)
        raise typer.Exit(2)
    try:
        with progress_bar() as bar:
            task = bar.add_task(f"export {fmt}", total=None)
            dest = export_run(run_dir, fmt, out_dir,
                              progress=lambda done, total: bar.update(task, completed=done, total=total))
    except MathstressError as exc:
        _fail(exc)
    out.print(f"exported {run_dir} as {fmt} to {dest}")


@app.command()
def show(
    run_dir: Annotated[Path, typer.Argument(help="A finished run folder.")],
    item_id: Annotated[str, typer.Argument(help="The item id (see manifest.jsonl).")],
    out_file: Annotated[Optional[Path], typer.Option("--out", help="PNG path (default: RUN/show/ID.png).")] = None,
) -> None:
    """Write a contact sheet PNG: the item, its clean twin, and its labels."""
    from synth.show import contact_sheet

    try:
        path = contact_sheet(run_dir, item_id, out_file)
    except MathstressError as exc:
        _fail(exc)
    out.print(f"wrote {path}")


@app.command()
def taxonomy(
    families: Annotated[bool, typer.Option("--families", help="List problem families instead.")] = False,
    degradations: Annotated[bool, typer.Option("--degradations", help="List degradation subtypes.")] = False,
) -> None:
    """Print the error taxonomy with its benchmark projections (or the families / degradations)."""
    from synth.taxonomy import DEGRADATION_SUBTYPES, ERROR_SUBTYPES

    if families:
        out.print(_families_table())
        return
    if degradations:
        from perturb.photo import REGISTRY as OPS

        table = Table(title="Photographic degradations (severity 0 = identity)")
        for col in ("family", "subtype", "severity 1 / 2 / 3", "available"):
            table.add_column(col)
        for d in DEGRADATION_SUBTYPES:
            table.add_row(d.family, d.subtype, d.levels, "yes" if d.subtype in OPS else "planned")
        out.print(table)
        return
    from perturb.reasoning import REGISTRY as INJECTORS

    table = Table(title="Reasoning-error taxonomy and projections")
    for col in ("family", "subtype", "ErrorRadar", "FERMAT", "MMErroR", "injector"):
        table.add_column(col)
    for s in ERROR_SUBTYPES:
        table.add_row(s.family, s.subtype, s.errorradar or "—", s.fermat or "—", s.mmerror or "—",
                      "yes" if s.subtype in INJECTORS else "planned")
    out.print(table)


def _families_table() -> Table:
    import numpy as np

    from synth.generators import REGISTRY, get_family

    table = Table(title="Problem families")
    for col in ("family", "domain", "figure", "question types", "image roles", "example"):
        table.add_column(col, overflow="fold")
    for fid in sorted(REGISTRY):
        fam = get_family(fid)
        example = fam.build(np.random.default_rng(0), difficulty="easy", question_type="free", problem_id="example")
        table.add_row(fid, fam.domain, fam.figure_kind or "—", ", ".join(fam.question_types),
                      ", ".join(fam.image_roles), example.question_text)
    return table


@app.command("configs")
def list_configs() -> None:
    """List the packaged configs (usable by name: `mathstress generate quickstart`)."""
    from synth.resources import packaged_configs, resource_dir

    for name in packaged_configs():
        out.print(f"{name}\t{resource_dir('configs') / (name + '.yaml')}")
