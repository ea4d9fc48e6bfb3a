"""Every packaged config still gives the bytes it gave when its digest was recorded.

The digests in data/config_digests.json were first recorded with the code at commit aa30462 (before the
architecture refactor of issue 17), and re-recorded on 2026-11-26 after issues 18, 19 and 20 changed what
the configs produce on purpose (photos of error variants, quota allocation, new injector versions, solution
styles, the camera scene), and again at the end of round 3 (conceptual errors said in words, chains' controls
worded like their twins, the quota plan's equal control share and family coverage, paired severities, photo speed
paths), and again in round 4 (the camera base layer paired across a page's severities, recorded as
`camera_seed`), and in round 5 (the desk drawn without aliasing, paper_warp's and bleed_through's severities one
sheet, the shadow field in float32, the colour noise upsampled as 16-bit values; then a page's shadow severities
one shadow), and in round 6 (the camera frames the flat sheet and never zooms in on a posed one, one photo in
ten landscape, shadow severity 2 deeper), and in round 13 (the noise's spread aimed at the photo it lands on), and in
round 21 (a counted gradient's sign from the drawn line, explanations numbered as their chain, a carried slip's
explanation naming the final answer shown, "how long is BC" a length, a useful line graph's values placed,
mathreal_like's question-only pages; capture_profiles, photo_sweep and seeing_is_solving_like unchanged);
each config is cut to its first two base problems: the manifest rows (without
their `versions` field) and every image, byte for byte. A refactor that changes what a config produces
fails here; a deliberate change of output re-records the file and says why in its commit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from synth.config import load_config
from synth.pipeline import run, versions
from synth.resources import packaged_configs

GOLDEN = json.loads((Path(__file__).parent / "data" / "config_digests.json").read_text(encoding="utf-8"))


def run_digest(run_dir: Path) -> str:
    """One sha256 over the manifest rows (minus `versions`) and every image's path and bytes."""
    h = hashlib.sha256()
    rows = []
    for line in (run_dir / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row.pop("versions", None)
        rows.append(json.dumps(row, sort_keys=True))
    h.update("\n".join(rows).encode())
    for path in sorted((run_dir / "images").rglob("*")):
        if path.is_file():
            h.update(str(path.relative_to(run_dir)).encode())
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def test_every_packaged_config_has_a_recorded_digest():
    assert sorted(GOLDEN["digests"]) == packaged_configs()


@pytest.mark.parametrize("name", sorted(GOLDEN["digests"]))
def test_packaged_config_gives_the_recorded_bytes(name: str, tmp_path: Path):
    installed = {k: v for k, v in versions().items() if k not in ("mathstress", "source")}  # source: our code
    if installed != GOLDEN["versions"]:
        pytest.skip(f"recorded with {GOLDEN['versions']}, installed {installed}: image bytes depend on these")
    config = load_config(name).model_copy(update={"count": GOLDEN["limit"]})
    run(config, tmp_path / name)
    assert run_digest(tmp_path / name) == GOLDEN["digests"][name]
