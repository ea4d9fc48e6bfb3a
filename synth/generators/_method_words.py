"""What a solver says of the method at a conceptual mal-rule's line, wrong and right, in the same words.

Each conceptual mal-rule of a family (``MalRule`` with a conceptual subtype) has one entry here: a frame and two
fillers. The error variant's chain says the wrong filler at the mal-rule's line, its clean twin (and every other
chain of the base) the right one in the same frame and phrasing, so the two sentences differ only in the method's
mathematical content ("Since the angles in a triangle add up to 360°, ..." / "... add up to 180°, ..."). The
judge-facing ``MalRule.explanation`` is ground truth for judges and is never written into a chain.

Frames (the phrasing bank each fills, ``templates/chains/<style>/<bank>.j2``):
- ``method``: a verb phrase after "I" / "we" / "to" ("use πr² for the area"), bank ``concept``;
- ``assume``: a statement taken as true ("the first item is put back"), bank ``assume``;
- ``infer``: a conclusion drawn ("the two angles are equal"), bank ``infer``;
- ``asked``: what the question asks for, as the solver read it ("the percentage change"), bank ``asked``.

Fillers are plain words (no rule ids, no SymPy syntax) and are kept close: the wrong one shares its words with the
right one wherever the mistake allows, so a text classifier cannot tell the two chains apart by vocabulary alone.
"""

from __future__ import annotations

from dataclasses import dataclass

FRAMES = {"method": "concept", "assume": "assume", "infer": "infer", "asked": "asked"}


@dataclass(frozen=True)
class MethodWords:
    """One mal-rule's sentence slot: the frame, what the error variant says there, what its twin says."""

    frame: str
    wrong: str
    right: str

    @property
    def bank(self) -> str:
        """The phrasing bank (step kind) the frame fills."""
        return FRAMES[self.frame]


_SUBTRACT_COEFFICIENT = ("method", "undo the multiplication by subtracting the coefficient",
                         "undo the multiplication by dividing by the coefficient")
_CONSTANT_KEEPS_SIGN = ("infer", "the constant moves to the other side with its sign",
                        "the constant moves to the other side with its sign changed")
_DIAMETER_AS_RADIUS = ("method", "use the diameter as the radius", "use half the diameter as the radius")
_OR_OVERLAP = ("method", "add the two probabilities", "add the two probabilities and take away the overlap")
_RUN_OVER_RISE = ("method", "divide the change in x by the change in y", "divide the change in y by the change in x")
_MIXED_ORDER = ("method", "subtract the y values and the x values in opposite orders",
                "subtract the y values and the x values in the same order")
_OVER_NEW = ("method", "divide the change by the new value", "divide the change by the original value")

# family id -> mal-rule id -> (frame, wrong filler, right filler)
_WORDS: dict[str, dict[str, tuple[str, str, str]]] = {
    "algebra.exponents.simplify": {
        "multiply_exponents_for_product": ("method", "multiply the indices when multiplying powers of the same base",
                                           "add the indices when multiplying powers of the same base"),
        "add_exponents_for_power": ("method", "add the indices for a power of a power",
                                    "multiply the indices for a power of a power"),
        "power_skips_coefficient": ("method", "raise the letter to the power",
                                    "raise the number and the letter to the power"),
    },
    "algebra.inequalities.linear": {
        "no_flip_negative_divisor": ("method", "divide both sides by the negative number and keep the inequality sign",
                                     "divide both sides by the negative number and reverse the inequality sign"),
        "flip_on_subtraction": ("infer", "subtracting from both sides reverses the inequality sign",
                                "subtracting from both sides keeps the inequality sign"),
    },
    "algebra.linear.both_sides": {
        "move_term_keep_sign": ("infer", "the term moves to the other side with its sign",
                                "the term moves to the other side with its sign changed"),
        "move_constant_keep_sign": _CONSTANT_KEEPS_SIGN,
        "subtract_coefficient": _SUBTRACT_COEFFICIENT,
    },
    "algebra.linear.brackets": {
        "distribute_first_term_only": ("method", "multiply the first term in the bracket by the number outside",
                                       "multiply every term in the bracket by the number outside"),
        "negative_times_negative": ("assume", "a negative times a negative is negative",
                                    "a negative times a negative is positive"),
        "move_constant_keep_sign": _CONSTANT_KEEPS_SIGN,
        "subtract_coefficient": _SUBTRACT_COEFFICIENT,
    },
    "algebra.linear.one_step": {
        "same_operation": ("method", "move the number across with the same operation",
                           "move the number across with the inverse operation"),
        "operands_reversed": ("method", "undo the operation, taking the numbers in reverse order",
                              "undo the operation, taking the numbers in order"),
    },
    "algebra.linear.two_step": {
        "move_term_keep_sign": _CONSTANT_KEEPS_SIGN,
        "divide_one_term": ("method", "divide the term with the unknown and the other side by the coefficient",
                            "take the constant from both sides before dividing by the coefficient"),
        "subtract_coefficient": _SUBTRACT_COEFFICIENT,
    },
    "algebra.polynomial.simplify": {
        "square_of_sum": ("method", "square the bracket term by term", "square the bracket with the middle term"),
        "negative_first_term_only": ("method", "multiply the first term of the bracket by the negative number",
                                     "multiply each term of the bracket by the negative number"),
    },
    "algebra.quadratic.factoring": {
        "root_keeps_bracket_sign": ("infer", "each root has the same sign as the number in its bracket",
                                    "each root has the opposite sign to the number in its bracket"),
        "single_root": ("assume", "the equation has one solution", "the equation has two solutions"),
    },
    "algebra.quadratic.formula": {
        "plus_b": ("method", "use the formula with +b on top", "use the formula with −b on top"),
        "denominator_a": ("method", "use the formula with a underneath", "use the formula with 2a underneath"),
    },
    "algebra.systems.two_equations": {
        "combine_right_side_wrongly": ("method", "combine the left sides and the right sides in opposite ways",
                                       "combine the left sides and the right sides in the same way"),
        "distribute_first_term_only": ("method", "substitute and multiply the first term of the expression",
                                       "substitute and multiply every term of the expression"),
        "scale_left_side_only": ("method", "multiply the left side of the equation to match the coefficients",
                                 "multiply both sides of the equation to match the coefficients"),
    },
    "arithmetic.decimals.operations": {
        "align_last_digits": ("method", "line the numbers up by their last digits",
                              "line the numbers up by their decimal points"),
        "places_of_one_factor": ("method", "count the decimal places in the first number",
                                 "count the decimal places in both numbers"),
        "coupon_added": ("asked", "the bill with the coupon added on", "the bill with the coupon taken off"),
    },
    "arithmetic.fractions.add_unlike": {
        "add_across": ("method", "add the numerators and add the denominators",
                       "add the numerators over a common denominator"),
        "scale_denominator_only": ("method", "scale the denominators to the common denominator",
                                   "scale the numerators and denominators to the common denominator"),
    },
    "arithmetic.fractions.multiply_divide": {
        "divide_without_reciprocal": ("method", "multiply by the second fraction as it is",
                                      "multiply by the second fraction turned upside down"),
        "reciprocal_of_first": ("method", "multiply with the first fraction turned upside down",
                                "multiply by the second fraction turned upside down"),
        "mixed_whole_plus_numerator": ("method", "add the whole number to the numerator",
                                       "multiply the whole number by the denominator and add the numerator"),
    },
    "arithmetic.multi_digit.addition": {
        "dropped_carry": ("method", "write down the units digit of each column sum",
                          "write down the units digit of each column sum and carry the tens"),
    },
    "arithmetic.multi_digit.multiplication": {
        "place_value_dropped": ("method", "multiply by each digit on its own",
                                "multiply by each digit at its place value"),
    },
    "arithmetic.multi_digit.subtraction": {
        "smaller_from_larger": ("method", "take the smaller digit from the larger one in each column",
                                "borrow from the next column where the top digit is smaller"),
    },
    "arithmetic.order_of_operations": {
        "left_to_right": ("method", "work through the operations from left to right",
                          "work through the operations in order, brackets first, then left to right"),
    },
    "arithmetic.percent.of_quantity": {
        "change_not_new_amount": ("asked", "the change in amount", "the new amount"),
        "successive_percents_add": ("assume", "the two percentage changes add up to one change",
                                    "the two percentage changes apply one after the other"),
        "percent_as_divisor": ("method", "find the percentage by dividing by the percent",
                               "find the percentage by dividing by 100 and multiplying by the percent"),
    },
    "arithmetic.percent.percent_change": {
        "over_new_value": _OVER_NEW,
        "change_not_percent": ("asked", "the change in amount", "the percentage change in amount"),
    },
    "arithmetic.rate.unit_rate": {
        "rate_inverted": ("method", "find the amount for one by dividing the count by the amount",
                          "find the amount for one by dividing the amount by the count"),
    },
    "arithmetic.ratio.share": {
        "wrong_share": ("asked", "the share of the other part", "the share of the part asked about"),
        "divide_by_people": ("assume", "one part is the total divided by the number of people",
                             "one part is the total divided by the number of parts"),
    },
    "calculus.derivative.chain_rule": {
        "inner_derivative_forgotten": ("method", "bring the power down and treat the bracket like a single letter",
                                       "bring the power down and multiply by the bracket's derivative"),
        "inner_derivative_raised": ("method", "bring the power down and put the bracket's derivative inside",
                                    "bring the power down and multiply by the bracket's derivative"),
    },
    "calculus.derivative.power_rule": {
        "raise_power": ("method", "multiply by the power and add one to the power",
                        "multiply by the power and take one from the power"),
        "keep_power": ("method", "multiply by the power", "multiply by the power and take one from the power"),
    },
    "calculus.derivative.product_rule": {
        "product_of_derivatives": ("method", "multiply the derivatives of the two factors",
                                   "multiply each factor's derivative by the other factor and add"),
        "minus_instead_of_plus": ("method", "multiply each factor's derivative by the other factor and subtract",
                                  "multiply each factor's derivative by the other factor and add"),
    },
    "calculus.integral.definite": {
        "power_not_divided": ("method", "raise each power by one",
                              "raise each power by one and divide by the new power"),
        "lower_limit_ignored": ("assume", "the value at the lower limit can be left out",
                                "the value at the lower limit is taken away"),
    },
    "calculus.limit.rational": {
        "difference_of_squares_as_square": ("method", "factorise the top as a square",
                                            "factorise the top as a difference of two squares"),
        "substitute_opposite": ("method", "put in the number the variable approaches with its sign changed",
                                "put in the number the variable approaches"),
        "leading_terms_ratio": ("method", "compare the powers on the top and bottom",
                                "compare the factors on the top and bottom"),
    },
    "commonsense.clock.interval": {
        "hour_hand_as_minutes": ("assume", "the short hand shows the minutes", "the short hand shows the hours"),
    },
    "commonsense.counting.objects": {
        "ignore_missing": ("assume", "every place in the array is filled", "not every place in the array is filled"),
        "add_rows_and_columns": ("method", "add the rows and the columns", "multiply the rows by the columns"),
    },
    "commonsense.number_line": {
        "count_ticks_not_gaps": ("method", "divide the interval by the number of marks",
                                 "divide the interval by the number of gaps"),
        "each_tick_is_one": ("assume", "each small division is 1",
                             "each small division is the interval divided by the number of gaps"),
    },
    "coordinate.graph.read_value": {
        "x_for_y": ("asked", "the x values", "the values of f at those x values"),
        "scales_input": ("method", "multiply the input before reading the graph",
                         "read the graph before multiplying the output"),
    },
    "coordinate.intercepts": {
        "mixed_order_subtraction": _MIXED_ORDER,
        "wrong_axis": ("asked", "where the line crosses an axis", "where the line crosses the axis named"),
    },
    "coordinate.line.through_points": {
        "run_over_rise": _RUN_OVER_RISE,
        "intercept_is_y1": ("assume", "the constant is the y value of the first point",
                            "the constant comes from expanding the bracket"),
    },
    "coordinate.slope.two_points": {
        "run_over_rise": _RUN_OVER_RISE,
        "mixed_order_subtraction": _MIXED_ORDER,
    },
    "geometry.angles.parallel_lines": {
        "supplementary_as_equal": ("infer", "the two angles are equal", "the two angles add up to 180°"),
        "equal_as_supplementary": ("infer", "the two angles add up to 180°", "the two angles are equal"),
    },
    "geometry.circle.area": {
        "area_as_circumference": ("method", "use 2πr for the area", "use πr² for the area"),
        "diameter_as_radius": ("method", "square the diameter", "square half the diameter"),
        "subtract_radii_first": ("method", "subtract the radii and then square",
                                 "square the radii and then subtract"),
    },
    "geometry.circle.circumference_arc": {
        "circumference_with_radius": ("method", "use πr for the circumference", "use 2πr for the circumference"),
        "arc_as_whole_circle": ("asked", "the length of the whole circumference", "the length of the arc"),
        "sector_perimeter_arc_only": ("asked", "the length of the arc", "the length of the arc and the two radii"),
    },
    "geometry.polygon.area_perimeter": {
        "area_without_half": ("method", "multiply by the height", "multiply by the height and halve"),
        "slant_for_height": ("assume", "the height is the slanted side",
                             "the height is the perpendicular distance, not the slanted side"),
        "perimeter_two_sides": ("method", "add the length and the width", "add the length and the width twice"),
        "composite_overlap": ("method", "split the L-shape into two rectangles that overlap",
                              "split the L-shape into two rectangles that do not overlap"),
    },
    "geometry.pythagoras": {
        "leg_by_adding": ("method", "add the squares of the two known sides",
                          "subtract the squares of the two known sides"),
        "no_square_root": ("method", "add the squares of the two shorter sides",
                           "add the squares of the two shorter sides and take the square root"),
    },
    "geometry.similar_triangles": {
        "additive_scaling": ("method", "add the difference between the matching sides",
                             "multiply by the ratio of the matching sides"),
        "inverted_scale_factor": ("method", "multiply by the scale factor, old side over new side",
                                  "multiply by the scale factor, new side over old side"),
        "part_for_whole": ("assume", "the matching side is the lower part of the side",
                           "the matching side is the whole side"),
    },
    "geometry.triangle.angle_sum": {
        "angle_sum_360": ("assume", "the angles in a triangle add up to 360°",
                          "the angles in a triangle add up to 180°"),
        "isosceles_not_shared": ("infer", "just the marked base angle has that size",
                                 "each base angle has that size"),
    },
    "probability.compound": {
        "or_adds_overlap_twice": _OR_OVERLAP,
        "dependent_as_independent": ("assume", "the first item is put back", "the first item is not put back"),
        "and_adds_probabilities": ("method", "add the two probabilities since both must happen",
                                   "multiply the two probabilities since both must happen"),
        "one_order_only": ("asked", "the two colours in the order given", "the two colours in either order"),
    },
    "probability.simple": {
        "odds_not_probability": ("method", "divide the favourable count by the unfavourable count",
                                 "divide the favourable count by the total count"),
        "complement_forgotten": ("asked", "the probability that it happens", "the probability that it does not happen"),
        "colours_equally_likely": ("assume", "each colour is equally likely",
                                   "each item, whatever its colour, is equally likely"),
    },
    "probability.table.two_way": {
        "wrong_denominator": ("method", "divide by a total", "divide by the total for the group asked about"),
        "or_adds_overlap_twice": _OR_OVERLAP,
    },
    "solid.cone.volume": {
        "cone_without_third": ("method", "use πr²h for the volume", "use one third of πr²h for the volume"),
        "slant_as_height": ("assume", "the height is the slant height", "the height is found from the slant height"),
        "diameter_as_radius": _DIAMETER_AS_RADIUS,
    },
    "solid.cylinder.volume_surface": {
        "volume_with_circumference": ("method", "use 2πrh for the volume", "use πr²h for the volume"),
        "diameter_as_radius": _DIAMETER_AS_RADIUS,
        "surface_one_end": ("asked", "the curved surface and the bottom end",
                            "the curved surface and the top and bottom ends"),
    },
    "solid.prism.volume_surface": {
        "surface_faces_once": ("method", "add the three face areas once", "add the three face areas twice"),
        "prism_without_half": ("method", "use base times height for the triangle",
                               "use half base times height for the triangle"),
        "base_area_only": ("asked", "the area of the end face", "the end face times the length"),
    },
    "solid.sphere.volume_surface": {
        "sphere_surface_as_circle": ("method", "use πr² for the surface", "use 4πr² for the surface"),
        "volume_with_r_squared": ("method", "use 4/3 πr² for the volume", "use 4/3 πr³ for the volume"),
        "hemisphere_without_base": ("asked", "the curved surface", "the curved surface and the flat face"),
    },
    "statistics.line_chart.reading": {
        "subtract_wrong_way": ("method", "subtract the later value from the earlier one",
                               "subtract the earlier value from the later one"),
        "count_points_not_gaps": ("method", "divide by the number of points", "divide by the time between the points"),
        "percent_of_new": _OVER_NEW,
    },
    "statistics.mean.bar_chart": {
        "mean_wrong_count": ("method", "divide the total by the number of gaps between the bars",
                             "divide the total by the number of bars"),
        "mean_as_midrange": ("assume", "the mean is the largest and smallest bars added and halved",
                             "the mean is all the bars added and shared equally"),
    },
    "statistics.median_mode.table": {
        "median_without_sorting": ("method", "take the middle values as they stand",
                                   "take the middle values once they are in order"),
        "mode_as_largest": ("assume", "the mode is the largest value", "the mode is the most common value"),
        "mean_divides_by_rows": ("method", "divide the total by the number of rows",
                                 "divide the total by the total frequency"),
    },
    "statistics.pie_chart.reading": {
        "pie_from_100": ("method", "divide the angle by 100", "divide the angle by 360"),
        "angles_sum_180": ("assume", "the angles in a pie chart add up to 180°",
                           "the angles in a pie chart add up to 360°"),
    },
    "trig.exact_values": {
        "swap_sin_cos": ("assume", "the sine and cosine values are the other way round",
                         "the sine and cosine values are the right way round"),
        "tan_inverted": ("assume", "tan is cos divided by sin", "tan is sin divided by cos"),
        "special_value_zero": ("assume", "sin 90° and cos 0° are 0", "sin 90° and cos 0° are 1"),
    },
    "trig.identity.simplify": {
        "factor_unequal_coefficients": ("method", "take the larger coefficient out of both squared terms",
                                        "split the larger coefficient so both squared terms match"),
        "identity_drops_coefficient": ("method", "replace the bracket by 1",
                                       "replace the bracket by 1 and keep the number in front"),
        "pythagorean_sign": ("assume", "the identity gives −1", "the identity gives 1"),
    },
    "trig.right_triangle.ratios": {
        "ratio_swap": ("method", "choose the ratio for the other two sides",
                       "choose the ratio for the two sides given"),
        "ratio_inverted": ("method", "rearrange the ratio upside down", "rearrange the ratio to get the side alone"),
    },
}

METHOD_WORDS: dict[str, dict[str, MethodWords]] = {
    family: {rule: MethodWords(*entry) for rule, entry in rules.items()} for family, rules in _WORDS.items()}


def method_words(family: str, rule: str) -> MethodWords | None:
    """The worded slot of ``family``'s mal-rule ``rule``, or None when it has none (then the line is not worded)."""
    return METHOD_WORDS.get(family, {}).get(rule)
