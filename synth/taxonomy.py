"""The error taxonomy (DESIGN §5) and its projections as data; the degradation families (§7).

The degradation subtypes and their severities are not listed here: each photo op states them and
``perturb.photo.degradation_subtypes()`` derives the table from the registered ops.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ErrorSubtype:
    family: str
    subtype: str
    errorradar: str | None
    fermat: str | None
    mmerror: str | None
    is_error: bool
    description: str


def _rows(family: str, er: str | None, fe: str | None, mm: str | None, is_error: bool,
          items: dict[str, str]) -> list[ErrorSubtype]:
    return [ErrorSubtype(family, s, er, fe, mm, is_error, d) for s, d in items.items()]


ERROR_SUBTYPES: tuple[ErrorSubtype, ...] = tuple(
    _rows("computational", "CAL", "CO", "B", True, {
        "final_number": "the last computed number is wrong",
        "intermediate_propagated": "an intermediate result is wrong and later steps carry it forward",
        "intermediate_corrected": "an intermediate result is wrong but the final answer is right",
        "copy_error": "a value is copied wrongly from an earlier line or the question",
        "sign_error": "a sign is lost or flipped",
        "unit_conversion": "a unit is converted with the wrong factor",
    })
    + _rows("conceptual", "KNOW", "CP", "D", True, {
        "formula_misuse": "a wrong formula is used (mal-rule)",
        "theorem_misapplication": "a theorem is applied where its conditions fail",
        "incorrect_fact": "a false mathematical fact is used",
    })
    + _rows("conceptual", "REAS", "CP", "B", True, {
        "invalid_assumption": "an unjustified assumption is made",
        "invalid_inference": "a conclusion does not follow from the previous line",
    })
    + _rows("conceptual", "MIS", "CP", "C", True, {
        "misinterpret_question": "the question is misread (wrong quantity asked or given)",
    })
    + _rows("notational", "CAL", "NO", "B", True, {
        "operator_swap": "an operator is written as another",
        "misplaced_parentheses": "parentheses are dropped or misplaced",
        "symbol_error": "a symbol is written as another",
    })
    + _rows("visual_perception", "VIS", None, "A", True, {
        "misread_value": "a value is read wrongly from the figure",
        "misread_label": "a label in the figure is attached to the wrong element",
        "misread_scale": "the scale or tick spacing of the figure is misread",
        "miscount": "objects in the figure are miscounted",
        "misread_relation": "a relation in the figure (parallel, equal, right angle) is misread",
    })
    + [
        ErrorSubtype("presentation", "format_ignored", "MIS", "PR", None, True,
                     "the requested answer format is ignored"),
        ErrorSubtype("presentation", "incorrect_units", "CAL", "PR", None, True,
                     "the answer carries the wrong unit"),
        ErrorSubtype("presentation", "variable_misnaming", "CAL", "PR", None, True,
                     "a variable changes name midway"),
        ErrorSubtype("presentation", "logic_disruption", "MIS", "PR", None, True,
                     "steps appear out of logical order"),
        ErrorSubtype("presentation", "terminology_swap", "MIS", "PR", None, True,
                     "a mathematical term is replaced by a wrong one"),
        ErrorSubtype("presentation", "contextual_swap", "MIS", "PR", None, True,
                     "an object or name from the question's context is swapped"),
    ]
    + _rows("superficial", None, "SU", None, False, {
        "variable_rename": "a variable is renamed consistently",
        "step_omission": "a routine step is left out",
        "irrelevant_info": "a true but irrelevant line is added",
        "equivalent_format": "a value is written in an equivalent form",
        "reorder_terms": "commutative terms are reordered",
    })
)

SUBTYPES: dict[str, ErrorSubtype] = {s.subtype: s for s in ERROR_SUBTYPES}

# Subtypes kept in the taxonomy (their ids still read back, FERMAT names them) but no longer injected, and why.
RETIRED: dict[str, str] = {
    "logic_disruption": (
        "retired (issue 18): its label must name the first line that uses a value not yet derived, and no family "
        "has one; every family writes equivalent lines, so two lines swapped are a valid skip-ahead (the "
        "step_omission control's pattern) followed by a line that goes backwards"),
}
ERROR_FAMILIES: tuple[str, ...] = tuple(dict.fromkeys(s.family for s in ERROR_SUBTYPES))


def projections(subtype: str) -> dict[str, str | None]:
    """The subtype's labels in ErrorRadar, FERMAT and MMErroR terms."""
    s = SUBTYPES[subtype]
    return {"errorradar": s.errorradar, "fermat": s.fermat, "mmerror": s.mmerror}


# Degradation families (DESIGN section 7), in the order tables list them. The subtypes and what each
# severity means are stated by the ops themselves (``perturb.photo``), which register under these families.
DEGRADATION_FAMILIES: tuple[str, ...] = ("quality", "perspective", "interference", "camera")


@dataclass(frozen=True)
class DegradationSubtype:
    """One row of the degradation taxonomy: ``levels`` says what severities 1 / 2 / 3 measure."""

    family: str
    subtype: str
    levels: str
