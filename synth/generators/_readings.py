"""One problem's figure readings, memoised: the visual injectors ask for them in turn (and again to propose), the
solution styles ask once more for the readings no given shows, and a family checks each misread by re-deriving
the solution (``effective_readings``), so the work is done once per problem.
"""

from __future__ import annotations

from collections import OrderedDict

from synth.generators.base import Family, Reading
from synth.records import Problem

# The five visual injectors ask for one problem's readings in turn (and again to propose), and a family
# checks each misread by re-deriving the solution: remember the last problems' readings. The key is the problem's
# content (family, id and params), not its identity: the planner and the stages rebuild the same problem as new
# objects (one base was seen as 24 objects in a quickstart run), and an identity key missed every time.
_READINGS: OrderedDict[tuple[str, str, str], tuple[Reading, ...]] = OrderedDict()
_READINGS_KEPT = 32


def figure_readings(family: Family, problem: Problem) -> tuple[Reading, ...]:
    """``family.figure_readings(problem.params)``, memoised for the most recent problems (by content)."""
    key = (problem.family, problem.id, repr(problem.params))
    hit = _READINGS.get(key)
    if hit is not None:
        _READINGS.move_to_end(key)
        return hit
    readings = tuple(family.figure_readings(problem.params))
    _READINGS[key] = readings
    while len(_READINGS) > _READINGS_KEPT:
        _READINGS.popitem(last=False)
    return readings
