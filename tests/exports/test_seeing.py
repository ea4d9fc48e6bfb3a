"""Seeing Is Solving's answer scoring (App. E.4 of the paper; its code is on OSF, not public here) reads every
gold ``answer.value`` we write.

``their_score`` follows the procedure as the paper states it: trim, drop one trailing degree sign,
keep what follows the last ``=``, insert ``*`` for implicit products (digit-letter, ``)``-letter,
digit-``sqrt``), rewrite ``(-`` as ``(-1*``, read a mixed number ``a b/c`` as ``a + b/c``, SymPy
``parse_expr`` with the standard transformations, ``evaluate=False`` and local symbols x, y, sqrt;
right when the strings are identical or ``simplify(pred - gold) == 0``; a parse failure is wrong.
Only our own gold strings and fixed test strings reach ``parse_expr`` here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import sympy
from sympy.parsing.sympy_parser import parse_expr, standard_transformations

from synth.exports import export, load_export
from synth.exports.seeing import answer_units, sis_value
from synth.manifest import read_manifest
from synth.mathparse import equivalent, try_parse
from synth.pipeline import run
from tests.conftest import tiny_config

FIGURE_FAMILIES = {"geometry.circle.area": 1.0, "geometry.pythagoras": 1.0, "solid.cone.volume": 1.0,
                   "coordinate.slope.two_points": 1.0, "statistics.line_chart.reading": 1.0,
                   "geometry.triangle.angle_sum": 1.0}


def their_parse(text: str) -> sympy.Expr | None:
    s = text.strip().removesuffix("°")
    s = s.rsplit("=", 1)[-1].strip() if "=" in s else s
    s = re.sub(r"(\d)\s*([A-Za-z(])", r"\1*\2", s)
    s = re.sub(r"\)\s*([A-Za-z(])", r")*\1", s)
    s = s.replace("(-", "(-1*")
    s = re.sub(r"^(\d+)\s+(\d+)/(\d+)$", r"(\1 + \2/\3)", s)
    x, y = sympy.symbols("x y")
    try:
        return parse_expr(s, local_dict={"x": x, "y": y, "sqrt": sympy.sqrt},
                          transformations=standard_transformations, evaluate=False)
    except (SyntaxError, TypeError, ValueError, sympy.SympifyError):
        return None


def their_score(pred: str, gold: str) -> bool:
    if pred.strip() == gold.strip():
        return True
    a, b = their_parse(pred), their_parse(gold)
    if a is None or b is None:
        return False
    try:
        return sympy.simplify(a - b) == 0
    except TypeError:
        return False


@pytest.fixture(scope="module")
def seeing(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("seeing") / "run"
    run(tiny_config(count=12, generate={"families": FIGURE_FAMILIES}, inject={"variants_per_base": 0},
                    render={"enabled": False}, degrade={"ops": []}), out)
    return out, export(out, out.parent / "export", "seeing").path


def test_every_gold_value_parses_with_their_procedure_and_equals_our_answer(seeing: tuple[Path, Path]) -> None:
    run_dir, dest = seeing
    rows = {r["id"]: r for r in read_manifest(run_dir)}
    records = load_export(dest, "seeing")
    shown = {rows[r.id]["answer"]["text"] for r in records}
    assert any(c in "".join(shown) for c in "π√") and any(u in "".join(shown) for u in ("cm", "in", "m", "ft"))
    for rec in records:
        value = rec.raw["answer"]["value"]
        assert value.isascii() and "^" not in value, value
        gold = their_parse(value)
        assert gold is not None, value
        assert their_score(value, value)
        ours = try_parse(rows[rec.id]["answer"]["value"])
        assert ours is not None and equivalent(ours, try_parse(str(gold).replace("**", "^"))), value
    with_image = [r for r in records if r.labels["condition"] == "with_image"]
    assert with_image and all(r.image is not None and r.image.is_file() for r in with_image)


def test_the_shown_answers_the_old_export_wrote_fail_their_scorer_and_ours_pass() -> None:
    # What the paper's procedure made of our earlier gold values (the answer text), and what we write now.
    for shown, value, units in (("12 cm", "12", "cm"), ("50%", "50", "%"), ("−3/2", "-3/2", None),
                                ("200π in²", "200*pi", "in^2"), ("4√13 m", "4*sqrt(13)", "m"),
                                ("49°", "49", "degrees")):
        assert not their_score(shown, value) or shown == "49°"
        assert their_score(sis_value(value), value) and answer_units(shown) == units
    assert sis_value("x^2 + e*abs(x)") == "x**2 + E*Abs(x)"


def test_the_seeing_record_keeps_the_paper_layout(seeing: tuple[Path, Path]) -> None:
    _, dest = seeing
    line = json.loads((dest / "seeing.jsonl").read_text(encoding="utf-8").splitlines()[0])
    solution = line["reference_response"]["solution"]
    assert set(solution) == {"isSolvable", "required_information", "steps", "answer"}
    assert set(line["answer"]) == {"value", "units"}
