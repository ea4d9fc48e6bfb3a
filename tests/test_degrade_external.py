"""mathstress degrade: graded, measured photo degradations of images we did not make."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import cv2
import datasets
import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from perturb.photo import OPS
from synth.cli import app
from synth.degrade_external import ExternalConfig, degrade_external, load_external_config
from synth.errors import ConfigError, RunError, UnsafePathError
from synth.evaluate import evaluate_run, get_task, load_items, write_report
from synth.evaluate.models import Adapter
from synth.export import export_run
from synth.exports.hf import class_names
from synth.pipeline import run
from tests.conftest import folder_hashes, tiny_config


def page(i: int, size: tuple[int, int] = (180, 240)) -> np.ndarray:
    """A small RGB 'page': paper and a dark line of text whose length depends on ``i``."""
    img = np.full((*size, 3), 248, np.uint8)
    img[60:78, 20:60 + 30 * i] = 25
    return img


def write(folder: Path, name: str, pixels: np.ndarray) -> None:
    cv2.imwrite(str(folder / name), cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR))


@pytest.fixture()
def photos(tmp_path: Path) -> Path:
    folder = tmp_path / "photos"
    (folder / "sub").mkdir(parents=True)
    write(folder, "a.png", page(1))
    write(folder / "sub", "b.jpg", page(2))
    write(folder, "c.png", page(3))
    (folder / "notes.txt").write_text("not an image, not a source")
    return folder


def rows(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "manifest.jsonl").read_text().splitlines()]


def config(ops: str = "blur:2,tilt:1", **kw) -> ExternalConfig:
    return load_external_config(None, ops=ops, **kw)


def test_a_folder_gives_each_image_a_clean_control_and_measured_photos_paired_with_it(photos: Path,
                                                                                      tmp_path: Path) -> None:
    result = degrade_external(photos, tmp_path / "out", config(profiles=["desk_lamp_tilted"]))
    assert (result.sources, result.failed, result.items) == (3, 0, 12)
    by_base: dict[str, list[dict]] = {}
    for row in rows(tmp_path / "out"):
        by_base.setdefault(row["base_id"], []).append(row)
    assert [r["source"]["path"] for r in (v[0] for v in by_base.values())] == ["a.png", "c.png", "sub/b.jpg"]
    for items in by_base.values():
        clean, *shots = items
        assert clean["id"] == clean["base_id"] and clean["degradations"] == [] and clean["variant"] == "clean"
        assert [s["id"].rsplit("-", 1)[1] for s in shots] == ["d1", "d2", "p1"]
        for shot in shots:
            assert shot["clean_image"] == clean["image"] and shot["source"] == clean["source"]
            # a photo names the page it shows, as a generated run's photos do (the clean control: no twin)
            assert (shot["source_id"], shot["capture_twin"]) == (clean["id"], None)
            assert all(d["params"] and d["measured"] for d in shot["degradations"])
            assert (tmp_path / "out" / shot["image"]).is_file()
        tilt = shots[1]["degradations"][0]
        assert OPS["tilt"].rubric.holds(1, tilt["measured"]["abs_angle_deg"])
    # The clean control is exactly the pixels the ops saw: the decoded source.
    clean_a = cv2.cvtColor(cv2.imread(str(tmp_path / "out" / by_base["external-000000"][0]["image"])),
                           cv2.COLOR_BGR2RGB)
    assert np.array_equal(clean_a, page(1))


def test_an_earlier_degrade_inside_the_input_folder_is_not_taken_for_clean_sources(photos: Path,
                                                                                    tmp_path: Path) -> None:
    # Before: a second degrade of the folder read the first one's photos (written inside it) as clean sources.
    first = degrade_external(photos, photos / "out", config("blur:1"))
    assert first.sources == 3
    again = degrade_external(photos, tmp_path / "again", config("blur:1"))
    assert again.sources == 3
    assert all(not r["source"]["path"].startswith("out/") for r in rows(tmp_path / "again"))


def test_a_corrupt_image_among_good_ones_is_one_recorded_failure_and_the_rest_goes_on(photos: Path,
                                                                                      tmp_path: Path) -> None:
    (photos / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not the rest of a png" * 4)
    good = (photos / "a.png").read_bytes()
    (photos / "cut.png").write_bytes(good[: len(good) // 2])  # truncated mid-stream
    result = degrade_external(photos, tmp_path / "out", config())
    assert (result.sources, result.failed) == (3, 2)
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["sources"] == {"total": 5, "degraded": 3, "failed": 2, "failed_by_kind": {"unreadable": 2}}
    failed = {f["source"]["path"]: f["reason"] for f in stats["failures"]}
    assert set(failed) == {"broken.png", "cut.png"} and all(failed.values())
    assert {r["source"]["path"] for r in rows(tmp_path / "out")} == {"a.png", "c.png", "sub/b.jpg"}


def png_header(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` pixels, with a few bytes of data: a decompression bomb."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + \
        chunk(b"IEND", b"")


def test_huge_and_tiny_images_are_refused_per_item_before_decoding(photos: Path, tmp_path: Path) -> None:
    (photos / "bomb.png").write_bytes(png_header(60_000, 60_000))
    write(photos, "large.png", page(1, (400, 400)))
    write(photos, "tiny.png", page(0, (12, 40)))
    result = degrade_external(photos, tmp_path / "out", config(max_pixels=100_000))
    kinds = {f["source"]["path"]: f["kind"] for f in result.failures}
    assert kinds == {"bomb.png": "too_large", "large.png": "too_large", "tiny.png": "too_small"}
    assert result.sources == 3
    reasons = {f["source"]["path"]: f["reason"] for f in result.failures}
    assert "decompression bomb" in reasons["bomb.png"] and "(160,000 pixels)" in reasons["large.png"]


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_photos(photos: Path, tmp_path: Path) -> None:
    for name, seed in (("one", 4), ("two", 4), ("three", 5)):
        degrade_external(photos, tmp_path / name, config(ops="noise:2,tilt:2", seed=seed))
    one, two, three = (folder_hashes(tmp_path / n) for n in ("one", "two", "three"))
    assert one == two
    assert one["manifest.jsonl"] != three["manifest.jsonl"]


def test_an_interrupted_run_resumes_to_the_same_bytes(photos: Path, tmp_path: Path) -> None:
    cfg = config(ops="blur:1,keystone:1", shard_size=1)
    degrade_external(photos, tmp_path / "whole", cfg)

    def stop_after_first_shard(done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        degrade_external(photos, tmp_path / "cut", cfg, progress=stop_after_first_shard)
    assert not (tmp_path / "cut" / "manifest.jsonl").exists()
    with pytest.raises(Exception, match="--resume"):
        degrade_external(photos, tmp_path / "cut", cfg)
    result = degrade_external(photos, tmp_path / "cut", cfg, resume=True)
    assert result.resumed_shards == 1
    assert folder_hashes(tmp_path / "cut") == folder_hashes(tmp_path / "whole")
    with pytest.raises(Exception, match="other settings"):
        degrade_external(photos, tmp_path / "cut", config(ops="blur:2", shard_size=1), resume=True)


@pytest.mark.parametrize("change", ["relabel", "same_size_image", "parquet"])
def test_resume_refuses_an_input_whose_labels_or_bytes_changed(photos: Path, tmp_path: Path, change: str) -> None:
    # Names and sizes alone were the fingerprint: an interrupted run resumed on a relabelled metadata.jsonl (or a
    # same-size replaced image, or an edited parquet of the same size) mixed the old gold with the new, silently.
    source = photos
    if change == "parquet":
        source = tmp_path / "pages.parquet"
        small_dataset().to_parquet(str(source))
    else:
        (photos / "metadata.jsonl").write_text("".join(
            json.dumps({"file_name": n, "question": f"q{i}", "answer": str(100 + i)}) + "\n"
            for i, n in enumerate(["a.png", "sub/b.jpg", "c.png"])))
    cfg = config(ops="blur:1", shard_size=1)

    def stop_after_first_shard(done: int, total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        degrade_external(source, tmp_path / "cut", cfg, progress=stop_after_first_shard)
    if change == "relabel":
        (photos / "metadata.jsonl").write_text((photos / "metadata.jsonl").read_text().replace('"10', '"20'))
    elif change == "same_size_image":
        data = bytearray((photos / "c.png").read_bytes())
        write(photos, "c.png", page(3)[::-1].copy())  # other pixels; the size may differ: pad or cut to the old one
        new = (photos / "c.png").read_bytes()
        (photos / "c.png").write_bytes(new if len(new) == len(data) else new[:len(data)].ljust(len(data), b"\0"))
    else:
        table = datasets.Dataset.from_parquet(str(source)).map(lambda r: {"answer": r["answer"].replace("2", "7")})
        table.to_parquet(str(source))
    with pytest.raises(RunError, match="input changed"):
        degrade_external(source, tmp_path / "cut", cfg, resume=True)


@pytest.mark.parametrize("kind", ["16-bit png", "float tiff", "32-bit tiff of 8-bit values"])
def test_a_deep_grey_scan_keeps_its_tones(tmp_path: Path, kind: str) -> None:
    # PIL's convert("RGB") clipped every 16-bit value over 255: a grey ramp's clean control came out 99.5 % white.
    folder = tmp_path / "scans"
    folder.mkdir()
    ramp = np.tile(np.linspace(0.0, 1.0, 400), (300, 1))
    if kind == "16-bit png":
        Image.fromarray((ramp * 65535).astype(np.uint16)).save(folder / "scan.png")
    elif kind.startswith("32-bit"):  # read as 8-bit, as convert read it (not divided into black)
        Image.fromarray(np.rint(ramp * 255).astype(np.int32)).save(folder / "scan.tiff")
    else:
        Image.fromarray(ramp.astype(np.float32)).save(folder / "scan.tiff")
    degrade_external(folder, tmp_path / "out", config(ops="blur:1"))
    clean = next(r for r in rows(tmp_path / "out") if not r["degradations"])
    grey = np.asarray(Image.open(tmp_path / "out" / clean["image"]).convert("L"), dtype=np.float64)
    assert abs(grey.mean() - 127.5) < 3 and (grey == 255).mean() < 0.01


class Gold(Adapter):
    """Answers every item with its gold label (the task's own canonical answer)."""

    id = "gold"

    async def respond(self, request):  # noqa: ANN001, ANN201
        return request.task.answer(request.task.gold(request.item))


def small_dataset(n: int = 3) -> datasets.Dataset:
    features = datasets.Features({"pid": datasets.Value("string"), "question": datasets.Value("string"),
                                  "answer": datasets.Value("string"), "decoded_image": datasets.Image()})
    return datasets.Dataset.from_dict({
        "pid": [f"mv{i}" for i in range(n)], "question": [f"What is {i} + 2?" for i in range(n)],
        "answer": [str(i + 2) for i in range(n)], "decoded_image": [Image.fromarray(page(i + 1)) for i in range(n)],
    }, features=features)


def test_a_saved_hf_dataset_keeps_its_rows_questions_and_answers_and_eval_and_report_read_it(tmp_path: Path) -> None:
    small_dataset().save_to_disk(str(tmp_path / "ds"))
    out = tmp_path / "out"
    result = degrade_external(tmp_path / "ds", out, config(ops="blur:1,exposure:2"))
    assert (result.kind, result.sources, result.items) == ("hf", 3, 9)
    first = rows(out)[3]
    assert first["source"] == {"kind": "hf", "row": 1, "id": "mv1"}
    assert (first["question"]["text"], first["answer"]["value"]) == ("What is 1 + 2?", "3")
    tasks = [get_task(t) for t in ("solve", "solvable")]
    evaluated = evaluate_run(out, Gold(), tasks, out_dir=out / "eval" / "gold", n_boot=50)
    solve = evaluated.results["tasks"]["solve"]
    assert solve["metrics"]["accuracy"] == 1.0 and solve["metrics"]["by_variant"] == {"clean": 1.0, "degraded": 1.0}
    assert {d["condition"] for d in solve["deltas"]} >= {"degradation:blur:1", "degradation:exposure:2"}
    assert write_report(out / "eval" / "gold").is_file()
    assert len(load_items(out)) == 9


@pytest.mark.parametrize("task", ["detect", "localize", "correct", "transcribe", "solve", "solvable"])
def test_eval_refuses_a_task_with_no_gold_on_your_own_images(photos: Path, tmp_path: Path, task: str) -> None:
    # Images with no metadata: no solution shown, no answer, text never seen. detect scored every page as a correct
    # solution, solve scored 0 against an empty answer, transcribe a CER of 1 against an empty text, each reported
    # as a measurement.
    degrade_external(photos, tmp_path / "out", config(ops="blur:1"))
    with pytest.raises(ConfigError, match=f"the {task} task applies to none of the 6 items.*it needs"):
        evaluate_run(tmp_path / "out", Gold(), [get_task(task)], out_dir=tmp_path / "ev", n_boot=10)
    assert not (tmp_path / "ev").exists()


@pytest.mark.parametrize("fmt", ["mmerror", "processbench", "mathreal", "fermat", "errorradar"])
def test_an_export_of_your_own_images_never_writes_an_empty_item(photos: Path, tmp_path: Path, fmt: str) -> None:
    # mmerror wrote EPD items with an empty question and no solution labelled "no error", processbench records with
    # an empty problem and no steps, mathreal empty questions and answers; fermat and errorradar published a
    # header-only file. Each exited 0.
    degrade_external(photos, tmp_path / "out", config(ops="blur:1"))
    with pytest.raises(RunError, match=f"none of the 6 items .* can be exported as {fmt}: .*nothing was written"):
        export_run(tmp_path / "out", fmt, tmp_path / "exp")
    assert not (tmp_path / "exp").exists()


def test_a_parquet_file_with_an_image_column_and_a_column_that_is_not_one(tmp_path: Path) -> None:
    small_dataset(2).to_parquet(str(tmp_path / "set.parquet"))
    result = degrade_external(tmp_path / "set.parquet", tmp_path / "out", config(ops="jpeg:3"))
    assert (result.kind, result.sources, result.items) == ("parquet", 2, 4)
    assert rows(tmp_path / "out")[1]["image"].endswith(".jpg")  # the camera's JPEG file is kept as it was encoded
    text_column = degrade_external(tmp_path / "set.parquet", tmp_path / "text", config(image_column="question"))
    assert text_column.sources == 0 and {f["kind"] for f in text_column.failures} == {"not_an_image"}
    assert "'What is 0 + 2?'" in text_column.failures[0]["reason"]


def test_a_numeric_column_named_as_the_image_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    datasets.Dataset.from_dict({"n": [1, 2]}).save_to_disk(str(tmp_path / "ds"))
    with pytest.raises(ConfigError, match="'n' holds .*int64.* cannot be an image"):
        degrade_external(tmp_path / "ds", tmp_path / "out", config(image_column="n"))
    assert not (tmp_path / "out").exists()


def test_layout_aware_ops_skip_arbitrary_photos_with_a_counted_reason_and_apply_to_a_mathstress_run(
        photos: Path, tmp_path: Path) -> None:
    ops = "question_marking:1,handwritten_answer:1,blur:1"
    external = degrade_external(photos, tmp_path / "ext", config(ops=ops))
    assert external.skipped == {"question_marking:1": 3, "handwritten_answer:1": 3}
    assert "question_token" in external.reasons["question_marking"]
    source = tmp_path / "run"
    run(tiny_config(count=1, inject={"variants_per_base": 0}), source)
    ours = degrade_external(source, tmp_path / "ours", config(ops=ops))
    assert ours.skipped == {} and ours.items == 4
    marked = next(r for r in rows(tmp_path / "ours") if r["id"].endswith("-d1"))
    assert OPS["question_marking"].rubric.holds(1, marked["degradations"][0]["measured"]["marked_tokens"])
    assert marked["steps"]
    assert marked["source"] == {"kind": "run", "id": "tiny-000000", "image": "images/tiny-000000.png"}


def test_the_cli_lists_failures_and_skips_and_exits_by_what_happened(photos: Path, tmp_path: Path) -> None:
    (photos / "broken.png").write_bytes(b"GIF89a broken")
    cli = CliRunner()
    ok = cli.invoke(app, ["degrade", str(photos), "--out", str(tmp_path / "out"), "--ops", "blur:1,question_marking:2"])
    assert ok.exit_code == 0, ok.output
    assert "failed broken.png" in ok.output and "skipped question_marking:2 on 3 images" in ok.output
    assert "wrote 6 items from 3 folder images" in ok.output
    bad_op = cli.invoke(app, ["degrade", str(photos), "--out", str(tmp_path / "x"), "--ops", "blurr:1"])
    assert bad_op.exit_code == 2 and "unknown op 'blurr'; did you mean 'blur'?" in bad_op.output
    nothing = cli.invoke(app, ["degrade", str(photos), "--out", str(tmp_path / "x")])
    assert nothing.exit_code == 2 and "nothing to do" in nothing.output
    only_bad = tmp_path / "bad"
    only_bad.mkdir()
    (only_bad / "x.png").write_bytes(b"nope")
    none = cli.invoke(app, ["degrade", str(only_bad), "--out", str(tmp_path / "y"), "--ops", "blur:1"])
    assert none.exit_code == 2 and "none of the 1 source images" in none.output


def test_overwrite_never_clears_a_folder_mathstress_did_not_write(photos: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me")
    result = CliRunner().invoke(app, ["degrade", str(photos), "--out", str(mine), "--ops", "blur:1", "--overwrite"])
    assert result.exit_code == 2 and "not written by mathstress" in result.output
    assert (mine / "thesis.tex").read_text() == "keep me"


def test_a_run_folder_whose_manifest_is_not_ours_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    fake = tmp_path / "run"
    fake.mkdir()
    (fake / "config.yaml").write_text("name: x\n")
    (fake / "manifest.jsonl").write_text(json.dumps({"id": "x-000001", "base_id": "x-000001"}) + "\n")
    with pytest.raises(RunError, match="line 1 is not a mathstress manifest row"):
        degrade_external(fake, tmp_path / "out", config())
    (fake / "manifest.jsonl").write_text(json.dumps({"id": "../etc", "base_id": "../etc"}) + "\n")
    with pytest.raises(UnsafePathError, match="not a mathstress id"):
        degrade_external(fake, tmp_path / "out", config())
    assert not (tmp_path / "out").exists()


def test_a_degraded_external_set_exports_to_hugging_face_with_its_own_labels(photos: Path, tmp_path: Path) -> None:
    # The external family, domain and difficulty are not in our registries: the export extends the ClassLabels
    # after the registry's names (so our labels keep their indexes) instead of failing.
    degrade_external(photos, tmp_path / "out", config())
    dest = export_run(tmp_path / "out", "hf", tmp_path / "hf")
    data = datasets.load_from_disk(str(Path(dest) / "dataset"))
    clean = data["clean"]
    family = clean.features["family"]
    assert family.names[:len(class_names()["family"])] == list(class_names()["family"])
    assert {family.int2str(v) for v in clean["family"]} == {r["family"] for r in rows(tmp_path / "out")}
    assert len(clean) == 3 and sum(len(split) for split in data.values()) == len(rows(tmp_path / "out"))


def test_an_images_severities_of_one_op_are_one_scene_made_worse(photos: Path, tmp_path: Path) -> None:
    """`--ops tilt` (every severity) ablations are paired, as the pipeline's are: the severities of one op entry
    share the op's structure (the turn's direction, the desk) and the camera's base layer."""
    degrade_external(photos, tmp_path / "out", load_external_config(None, ops="tilt"))
    for base in {r["base_id"] for r in rows(tmp_path / "out")}:
        shots = [r["degradations"][0] for r in rows(tmp_path / "out") if r["base_id"] == base and r["degradations"]]
        assert [d["severity"] for d in shots] == [1, 2, 3]
        assert len({d["params"]["camera_seed"] for d in shots}) == 1
        assert len({d["params"]["desk_seed"] for d in shots}) == 1
        assert len({np.sign(d["params"]["angle_deg"]) for d in shots}) == 1


@pytest.mark.parametrize("ops", ["blur:", "blur:\u0967", "tilt:x"])
def test_an_op_with_a_colon_and_no_ascii_severity_is_refused(ops: str) -> None:
    # "blur:" was taken as every severity, "blur:" with a Devanagari one as severity 1.
    with pytest.raises(ConfigError, match="write op:severity"):
        config(ops=ops)


def test_degrade_into_its_own_input_folder_says_so(photos: Path) -> None:
    # It said the folder "holds no images": every file was skipped as the run's own output.
    with pytest.raises(ConfigError, match="is the input folder"):
        degrade_external(photos, photos, config(ops="blur:1"))


def test_resuming_a_degrade_of_a_run_made_elsewhere_is_not_taken_for_a_version_change(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A shard of a degraded run starts with the input run's clean page, which keeps the input's versions: the
    # resume check read that row and refused every resume of a run made on another install (the review, round 21).
    import synth.stages

    source = tmp_path / "run"
    with monkeypatch.context() as m:
        m.setattr(synth.stages, "versions", lambda: {"mathstress": "0.1.0", "numpy": "1.99.0"})
        run(tiny_config(count=2, inject={"variants_per_base": 0}, degrade={"ops": []}), source)
    out = tmp_path / "out"
    degrade_external(source, out, config(ops="blur:1", shard_size=1))
    next(p for p in (out / "images").iterdir() if "-d" in p.name).unlink()  # one shard to make again
    resumed = degrade_external(source, out, config(ops="blur:1", shard_size=1), resume=True)
    assert resumed.redone and resumed.items == 4
