"""A run's single-op photos of one base at severities 1-3 are one scene made worse (a paired severity ablation)."""

from __future__ import annotations

from synth.config import validate_config
from synth.manifest import to_row
from synth.stages import ShardStats, build_items
from tests.conftest import tiny_config_data


def test_a_bases_severities_of_one_op_share_the_scene_and_grow_only_in_magnitude() -> None:
    ops = [{"subtype": "tilt", "severities": [1, 2, 3]}, {"subtype": "keystone", "severities": [1, 2, 3]}]
    config = validate_config(tiny_config_data(count=2, render={"dpi": 50}, inject={"variants_per_base": 0},
                                              degrade={"ops": ops}))
    for index in range(config.count):
        rows = [to_row(item) for item, _ in build_items(config, index, ShardStats())]
        for subtype, same in (("tilt", ("margin_frac", "desk_seed", "frame_aspect", "frame_landscape", "frame_fill")),
                              ("keystone", ("short_side", "margin_frac", "desk_seed", "frame_aspect", "frame_fill"))):
            recs = sorted((d for r in rows for d in r["degradations"] if d["subtype"] == subtype),
                          key=lambda d: d["severity"])
            assert [d["severity"] for d in recs] == [1, 2, 3]
            assert len({tuple(str(d["params"][k]) for k in same) for d in recs}) == 1, (subtype, recs)
        angles = [d["params"]["angle_deg"] for r in rows for d in r["degradations"] if d["subtype"] == "tilt"]
        assert angles[0] * angles[2] > 0 and abs(angles[0]) < abs(angles[1]) < abs(angles[2]), angles
