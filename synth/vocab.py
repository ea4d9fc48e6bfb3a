"""Label vocabularies of the seed benchmarks (``reference/seed-benchmarks.md``), one place for every reader.

The evaluation tasks (prompts, parsers, label sets) and the benchmark forms (record layouts) both
read these tables, so a label is spelled once. Which of our error subtypes maps to which label is
the taxonomy's business (``synth.taxonomy``); this module only says what each benchmark's labels
are called. Core layer: imports nothing of ours.
"""

from __future__ import annotations

# -- our own error families: the `categorize` task's labels (DESIGN §5), with a one-line gloss ----------
FAMILY_DEFINITIONS: tuple[tuple[str, str], ...] = (
    ("computational", "a calculation, copying, sign or unit-conversion slip"),
    ("conceptual", "a wrong formula, theorem or fact, an invalid assumption or inference, or a misread question"),
    ("notational", "a wrong operator, misplaced parentheses or a wrong symbol"),
    ("visual_perception", "a value, label, scale, count or relation misread from the figure"),
    ("presentation", "ignored format, wrong units, misnamed variables, disrupted logic or swapped terms"),
)

# -- ErrorRadar CATE (§1.2): code, full name, one-line definition --------------------------------------
ERRORRADAR: tuple[tuple[str, str, str], ...] = (
    ("VIS", "Visual Perception Error", "wrong information taken from the image, chart or diagram"),
    ("CAL", "Calculation Error", "a computation slip: arithmetic, unit conversion, or a sign carried wrongly"),
    ("REAS", "Reasoning Error", "a logical relation or conclusion applied wrongly"),
    ("KNOW", "Knowledge Error", "a knowledge point understood incompletely or wrongly, so applied wrongly"),
    ("MIS", "Misinterpretation of the Question", "the question's requirement or intent is misread"),
)
ERRORRADAR_CODES: tuple[str, ...] = tuple(code for code, _, _ in ERRORRADAR)
ERRORRADAR_NAMES: dict[str, str] = {code: name for code, name, _ in ERRORRADAR}

# -- FERMAT (§2.2): the five perturbation axes, and its own perturbation names (Table 2) where our
# subtype is the same perturbation ------------------------------------------------------------------
FERMAT_AXES: dict[str, str] = {"CO": "Computational", "CP": "Conceptual", "NO": "Notational",
                               "PR": "Presentation", "SU": "Superficial"}
FERMAT_TYPES: dict[str, str] = {
    "final_number": "Final Number", "intermediate_propagated": "Propagated Step Error",
    "intermediate_corrected": "Non-propagated Step Error", "copy_error": "Copy Error",
    "sign_error": "Intermediate Calculation", "formula_misuse": "Formula Misuse",
    "theorem_misapplication": "Theorem Misapplication", "incorrect_fact": "Outright Incorrect Fact",
    "invalid_assumption": "Invalid Assumption", "misinterpret_question": "Misinterpret Question",
    "operator_swap": "Operator Swap", "misplaced_parentheses": "Misplaced Parentheses",
    "symbol_error": "Symbol Error", "format_ignored": "Format Ignored", "incorrect_units": "Incorrect Units",
    "variable_misnaming": "Variable Misnaming", "logic_disruption": "Logic Disruption",
    "terminology_swap": "Terminology Swap", "contextual_swap": "Contextual Swap",
    "variable_rename": "Superficial Var Change", "step_omission": "Step Omission", "irrelevant_info": "Irrelevant Info",
}
FERMAT_ROTATION: dict[str, str] = {"90cw": "right", "90ccw": "left", "180": "upside down"}

# -- MMErroR ETC / EPD (§3.2): letter, label string, definition; "no error" for presence ------------------
MMERROR: tuple[tuple[str, str, str], ...] = (
    ("A", "A_Visual_Perception_Error", "a value, label, shape, colour, position or count misread from the image"),
    ("B", "B_Reasoning_Error", "perception is right, but arithmetic, combining quantities or deduction is wrong"),
    ("C", "C_Question_Comprehension_Error", "the question is misread: a different question answered, "
                                            "a constraint ignored"),
    ("D", "D_Knowledge_Deployment_Error", "wrong external knowledge: a false fact, a misapplied formula or concept"),
)
MMERROR_LETTERS: tuple[str, ...] = tuple(letter for letter, _, _ in MMERROR)
MMERROR_OPTIONS: dict[str, str] = {letter: label for letter, label, _ in MMERROR}
MMERROR_NO_ERROR = "E_NoError"   # the label an MMErroR record carries for an error-free solution (EPD task only)
NO_ERROR_LABEL = "no_error"       # the `presence` task's label for it, beside the letters

# -- MathReal (§5.2): the 14 subtypes under their three families; rotation is a category, handwritten
# answer 0/1 ------------------------------------------------------------------------------------------
MATHREAL_LEVELS: dict[str, dict[str, str]] = {
    # Our degradation subtype -> MathReal's key, per top-level group, spelled as in their testmini.json.
    "ImageQualityDegradation": {"blur": "blur", "exposure": "underexposure/overexposure",
                                "shadow": "shadow coverage", "glare": "glare"},
    "ImagePerspectiveVariation": {"rotation": "rotation", "tilt": "in-plane tilt", "keystone": "non-planar capture",
                                  "paper_warp": "background distortion"},
    "ContentInterference": {
        "handwritten_question": "handwritten questions", "bleed_through": "reverse side content",
        "question_marking": "question marking", "figure_marking": "figure marking",
        "handwritten_answer": "handwritten answer for multiple-choice questions",
        "handwritten_working": "handwritten process for constructed-response questions"},
}
MATHREAL_SUBTYPES: dict[str, str] = {s: name for group in MATHREAL_LEVELS.values() for s, name in group.items()}
MATHREAL_UPRIGHT = "Upright"
MATHREAL_ROTATION: dict[str, str] = {"90cw": "Clockwise90°", "90ccw": "Counterclockwise90°", "180": "180°"}
MATHREAL_QUESTION_TYPES: dict[str, str] = {"mcq": "MultipleChoice", "fill": "FillInTheBlank",
                                           "free": "ConstructedResponse"}
# MathReal's categories are figure genres (the five names of their calculate_answer_3.py); ours follow the figure.
MATHREAL_CATEGORIES: tuple[str, ...] = ("Plane Geometry", "Solid Geometry", "Logical Reasoning", "Function Graphs",
                                        "Statistical Charts")
MATHREAL_CATEGORY_OF_FIGURE: dict[str, str] = {
    "plane_geometry": "Plane Geometry", "solid": "Solid Geometry", "coordinate_grid": "Function Graphs",
    "bar_chart": "Statistical Charts", "line_chart": "Statistical Charts", "pie_chart": "Statistical Charts",
    "table": "Statistical Charts", "clock": "Logical Reasoning", "object_array": "Logical Reasoning",
    "number_line": "Logical Reasoning",
}

# -- Seeing Is Solving (§4): image roles and the two input conditions ----------------------------------
SEEING_ROLES: dict[str, str] = {"required": "REQUIRED", "useful": "USEFUL", "not_required": "NOT REQUIRED",
                                "insufficient": "INSUFFICIENT"}
SEEING_CONDITIONS: tuple[str, ...] = ("with_image", "without_image")
