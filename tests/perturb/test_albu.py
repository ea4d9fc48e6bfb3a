"""perturb.albu: our photo ops and capture profiles inside albumentations pipelines."""

from __future__ import annotations

import json
import pickle

import albumentations as A
import numpy as np
import pytest

from perturb.albu import (
    TRANSFORMS,
    Blur,
    CaptureProfile,
    PaperWarp,
    PhotoOp,
    QuestionMarking,
    Rotation,
    Tilt,
    named_profile,
    page_for,
    photo_warps,
)
from perturb.photo import OPS
from perturb.photo.base import DegradationError, NotApplicableError
from perturb.photo.functional.geometric import compose_forward, moved_page
from perturb.reasoning.base import clean_variant
from render import render_page
from synth.generators import get_family
from synth.records import Box, from_jsonable
from synth.records import DegradationRecord as Record

BOX = (60, 80, 220, 110)  # x0, y0, x1, y1 of the blue bar in ``bar_image``


def bar_image() -> np.ndarray:
    img = np.full((300, 280, 3), 245, np.uint8)
    img[BOX[1]:BOX[3], BOX[0]:BOX[2]] = (20, 40, 230)  # blue: nothing else in a photo (paper, desk) is
    return img


def bar_extent(image: np.ndarray) -> tuple[int, int, int, int]:
    """Where the bar ended up: the clearly blue pixels."""
    blue = image[..., 2].astype(int) - image[..., 0].astype(int) > 100
    ys, xs = np.nonzero(blue)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


def compose(*transforms, seed: int = 3) -> A.Compose:
    return A.Compose(list(transforms), bbox_params=A.BboxParams(format="pascal_voc", label_fields=["labels"]),
                     keypoint_params=A.KeypointParams(format="xy", remove_invisible=False), seed=seed,
                     save_applied_params=True, strict=True)


def test_every_registered_op_has_a_transform_class_named_after_it() -> None:
    assert sorted(TRANSFORMS) == sorted(OPS)
    assert TRANSFORMS["paper_warp"].__name__ == "PaperWarp" and TRANSFORMS["tilt"] is Tilt


def test_our_ops_compose_with_albumentations_own_and_the_box_still_frames_its_content() -> None:
    t = compose(A.HorizontalFlip(p=1.0), Tilt(severity=2, p=1.0), Blur(severity=1, p=1.0),
                A.RandomBrightnessContrast(p=1.0))
    out = t(image=bar_image(), bboxes=[BOX], labels=["question"], keypoints=[(BOX[0], BOX[1])])
    (x0, y0, x1, y1), = out["bboxes"]
    dx0, dy0, dx1, dy1 = bar_extent(out["image"])
    # The tilted bar's hull: the box holds the blue pixels (blur spreads them a pixel or two) and no more.
    assert x0 - 3 <= dx0 and y0 - 3 <= dy0 and dx1 <= x1 + 3 and dy1 <= y1 + 3
    assert (x1 - x0) * (y1 - y0) <= 1.15 * (dx1 - dx0) * (dy1 - dy0)
    assert out["labels"] == ["question"]
    assert [name for name, _ in out["applied_transforms"]] == ["HorizontalFlip", "Tilt", "Blur",
                                                               "RandomBrightnessContrast"]


def test_boxes_and_keypoints_move_exactly_as_our_layout_boxes_move() -> None:
    img = bar_image()
    out = compose(Tilt(severity=3, p=1.0))(image=img, bboxes=[BOX], labels=["q"], keypoints=[(100.0, 90.0)])
    record = from_jsonable(Record, out["degradations"][0])
    page = page_for(img.shape[1], img.shape[0], 150, [{"kind": "question_line", "ref": "0", "bbox": list(BOX)}])
    warps = photo_warps([record], page)
    moved = moved_page(page, warps).layout[0]
    assert np.allclose(out["bboxes"][0], [moved.x0, moved.y0, moved.x1, moved.y1], atol=0.05)
    # The tilt, then the camera's framing of the turned sheet.
    assert np.allclose(out["keypoints"][0], compose_forward(warps)(np.array([[100.0, 90.0]]))[0], atol=1e-3)
    assert out["image"].shape[:2] == (warps[-1].height, warps[-1].width)


@pytest.mark.parametrize("op", [Rotation(severity=1, p=1.0), Tilt(severity=2, p=1.0), PaperWarp(severity=3, p=1.0)],
                         ids=["rotation", "tilt", "paper_warp"])
def test_a_keypoints_angle_turns_and_its_scale_grows_as_the_sheet_does_there(op) -> None:
    # Only x and y moved: a keypoint pointing along a line of text pointed along the page's x axis after a tilt.
    img = bar_image()
    points = [(100.0, 95.0, 30.0, 8.0), (200.0, 200.0, 135.0, 4.0)]
    params = A.KeypointParams(format="xyas", remove_invisible=False)  # angle in degrees, y down, as albumentations'
    out = A.Compose([op], keypoint_params=params, seed=2)(image=img, keypoints=points)
    # Where a short step along each keypoint's direction lands: the direction and the length it is turned to.
    ahead = [(x + 0.01 * np.cos(np.radians(a)), y + 0.01 * np.sin(np.radians(a))) for x, y, a, _ in points]
    moved = A.Compose([op], keypoint_params=A.KeypointParams(format="xy", remove_invisible=False), seed=2)(
        image=img, keypoints=ahead)["keypoints"]
    for (x, y, a, s), (x1, y1), (_, _, _, s0) in zip(out["keypoints"], moved, points):
        step = np.array([x1 - x, y1 - y])
        assert a == pytest.approx(np.degrees(np.arctan2(step[1], step[0])) % 360, abs=0.5)
        if not isinstance(op, PaperWarp):  # a rigid turn and the camera's uniform framing: lengths scale alike
            assert s == pytest.approx(s0 * np.linalg.norm(step) / 0.01, rel=0.02)
    if isinstance(op, Rotation):  # a quarter turn clockwise: 30 degrees points at 120, the scale stays
        assert [round(k[2]) for k in out["keypoints"]] == [120, 225] and [k[3] for k in out["keypoints"]] == [8, 4]


def test_each_call_returns_our_records_with_params_and_a_measured_effect_in_the_rubric_bin() -> None:
    out = compose(Tilt(severity=2, p=1.0), Blur(severity=3, p=1.0))(image=bar_image(), bboxes=[], labels=[],
                                                                    keypoints=[])
    tilt, blur = out["degradations"]
    assert (tilt["subtype"], tilt["family"], tilt["severity"]) == ("tilt", "perspective", 2)
    assert OPS["tilt"].rubric.holds(2, tilt["measured"]["abs_angle_deg"])
    assert OPS["blur"].rubric.holds(3, blur["measured"]["sigma_at_150dpi"])
    assert json.loads(json.dumps(out["degradations"])) == out["degradations"]  # manifest-ready
    assert out["applied_transforms"][0][1]["degradations"] == [tilt]


def test_the_same_seed_gives_the_same_photo_and_another_seed_another() -> None:
    def run(seed: int) -> dict:
        return compose(A.Rotate(limit=5, p=1.0), Tilt(severity=1, p=1.0), PhotoOp("noise", severity=2, p=1.0),
                       seed=seed)(image=bar_image(), bboxes=[BOX], labels=["q"], keypoints=[])

    a, b, c = run(11), run(11), run(12)
    assert np.array_equal(a["image"], b["image"]) and a["degradations"] == b["degradations"]
    assert a["bboxes"] == b["bboxes"]
    assert not np.array_equal(a["image"], c["image"])


def test_to_dict_and_from_dict_round_trip_through_json_and_replay_the_same_photo() -> None:
    t = compose(A.HorizontalFlip(p=0.5), Tilt(severity=(1, 3), p=1.0), CaptureProfile("desk_lamp_tilted", p=1.0),
                seed=5)
    saved = json.loads(json.dumps(A.to_dict(t)))
    restored = A.from_dict(saved)
    restored.set_random_seed(5)  # albumentations does not serialise the seed
    t.set_random_seed(5)
    data = {"image": bar_image(), "bboxes": [BOX], "labels": ["q"], "keypoints": [(70, 85)]}
    a, b = t(**data), restored(**data)
    assert np.array_equal(a["image"], b["image"]) and a["bboxes"] == b["bboxes"]
    assert a["degradations"] == b["degradations"]
    names = [d["__class_fullname__"] for d in saved["transform"]["transforms"]]
    assert names == ["HorizontalFlip", "perturb.albu.Tilt", "perturb.albu.CaptureProfile"]


def test_applied_params_are_json_and_a_replay_saved_as_json_gives_the_same_photo() -> None:
    # The params albumentations keeps held our RenderedPage (and a profile's page text): json.dumps of
    # applied_transforms or of ReplayCompose's replay raised TypeError.
    page = bar_image()
    out = compose(Blur(severity=2, p=1.0), CaptureProfile("desk_lamp_tilted", p=1.0), seed=4)(
        image=page, bboxes=[BOX], labels=["q"], keypoints=[(70, 85)])
    logged = json.loads(json.dumps(out["applied_transforms"]))
    assert [name for name, _ in logged] == ["Blur", "CaptureProfile"]
    assert logged[1][1]["degradations"] == out["degradations"][1:]
    recorded = A.ReplayCompose([Tilt(severity=2, p=1.0), CaptureProfile("desk_lamp_tilted", p=1.0)])(image=page)
    again = A.ReplayCompose.replay(json.loads(json.dumps(recorded["replay"])), image=page)
    assert np.array_equal(again["image"], recorded["image"]) and again["degradations"] == recorded["degradations"]


def test_transforms_pickle_for_data_loader_workers() -> None:
    t = compose(Tilt(severity=1, p=1.0), seed=2)
    clone = pickle.loads(pickle.dumps(t))
    t.set_random_seed(2)
    clone.set_random_seed(2)
    data = {"image": bar_image(), "bboxes": [BOX], "labels": ["q"], "keypoints": []}
    assert np.array_equal(t(**data)["image"], clone(**data)["image"])


def test_a_capture_profile_by_name_records_each_packaged_op_in_physical_order() -> None:
    out = compose(CaptureProfile("desk_lamp_tilted", p=1.0))(image=bar_image(), bboxes=[BOX], labels=["q"],
                                                            keypoints=[])
    assert sorted(r["subtype"] for r in out["degradations"]) == sorted(s for s, _ in named_profile("desk_lamp_tilted"))
    assert [r["subtype"] for r in out["degradations"]][-1] == "jpeg"  # the camera's encoding comes last
    x0, y0, x1, y1 = out["bboxes"][0]
    dx0, dy0, dx1, dy1 = bar_extent(out["image"])
    assert x0 - 4 <= dx0 and y0 - 4 <= dy0 and dx1 <= x1 + 4 and dy1 <= y1 + 4


def test_an_unknown_profile_name_is_refused_with_the_packaged_names() -> None:
    with pytest.raises(DegradationError, match="desk_lamp_tilted"):
        CaptureProfile("desk_lamp")


def test_bad_severities_are_refused_when_the_transform_is_built() -> None:
    with pytest.raises(DegradationError, match="0-3"):
        Tilt(severity=5)
    with pytest.raises(DegradationError, match="severities 0 and 1"):
        TRANSFORMS["handwritten_answer"](severity=2)
    with pytest.raises(ValueError):  # albumentations' own schema check
        Tilt(severity=1, p=2.0)


def test_a_severity_range_draws_only_the_ops_levels() -> None:
    t = compose(Tilt(severity=(2, 3), p=1.0), seed=0)
    seen = {t(image=bar_image(), bboxes=[], labels=[], keypoints=[])["degradations"][0]["severity"]
            for _ in range(12)}
    assert seen == {2, 3}


def test_masks_follow_geometry_and_stay_put_under_colour_ops() -> None:
    img = bar_image()
    mask = (img[..., 0] < 100).astype(np.uint8)  # the bar
    blurred = A.Compose([Blur(severity=3, p=1.0)], seed=0)(image=img, mask=mask)
    assert np.array_equal(blurred["mask"], mask)
    turned = A.Compose([Rotation(severity=1, p=1.0)], seed=0)(image=img, mask=mask)  # severity 1: 90 degrees cw
    assert np.array_equal(turned["mask"], np.rot90(mask, k=-1))


def test_layout_aware_ops_refuse_without_our_layout_and_mark_the_question_with_it() -> None:
    problem = get_family("arithmetic.order_of_operations").build(np.random.default_rng(0), difficulty="easy",
                                                                 question_type="free", problem_id="t-000000")
    drawn = render_page(problem, clean_variant(problem), dpi=60)
    with pytest.raises(NotApplicableError, match="question_token"):
        QuestionMarking(severity=2, p=1.0)(image=drawn.pixels)
    layout = [{"kind": b.kind, "ref": b.ref, "bbox": [b.x0, b.y0, b.x1, b.y1]} for b in drawn.page.layout]
    out = A.Compose([QuestionMarking(severity=2, p=1.0), Tilt(severity=1, p=1.0)], seed=4, strict=True)(
        image=drawn.pixels, layout=layout)
    marking, tilt = out["degradations"]
    assert OPS["question_marking"].rubric.holds(2, marking["measured"]["marked_tokens"])
    moved = [Box(d["kind"], d["ref"], *d["bbox"]) for d in out["layout"]]
    assert len(moved) == len(layout) and all(b.x1 <= out["image"].shape[1] for b in moved)
    assert moved != [Box(d["kind"], d["ref"], *d["bbox"]) for d in layout]  # the tilt moved our layout too


def test_a_transposed_view_and_an_op_that_did_not_fire() -> None:
    # A non-contiguous array (np.rot90, a transpose) crashed blur, exposure, glare, jpeg, noise, paper_warp,
    # resolution and shadow inside OpenCV; an op with p < 1 that did not fire left no "degradations" key.
    from perturb.albu import Blur, Tilt

    img = np.full((120, 90, 3), 240, np.uint8)
    img[30:50, 10:80] = 20
    turned = np.rot90(img)
    out = A.Compose([Blur(severity=2, p=1.0)], seed=1)(image=turned)
    same = A.Compose([Blur(severity=2, p=1.0)], seed=1)(image=np.ascontiguousarray(turned))
    assert np.array_equal(out["image"], same["image"]) and len(out["degradations"]) == 1
    assert A.Compose([Tilt(severity=1, p=0.0)], seed=1)(image=img)["degradations"] == []


def test_a_page_that_does_not_describe_the_image_is_refused() -> None:
    from dataclasses import replace

    from perturb.albu import page_for
    from perturb.photo.profile import degrade_profile

    img = np.full((400, 300, 3), 240, np.uint8)
    for page in (page_for(400, 300, 150), replace(page_for(300, 400, 150), dpi=0)):
        with pytest.raises(DegradationError, match="page:"):
            degrade_profile(img, page, [("tilt", 1)], np.random.default_rng(0))


@pytest.mark.parametrize("severity", [True, "2", 2.0])
def test_a_severity_that_is_not_an_int_is_refused(severity: object) -> None:
    # pydantic's lax mode took True as 1 and "2" as 2.
    from perturb.albu import Tilt

    with pytest.raises(ValueError, match="valid integer"):
        Tilt(severity=severity)


@pytest.mark.parametrize("dtype", [bool, np.int64])
def test_a_bool_or_int64_mask_moves_and_keeps_its_dtype(dtype: type) -> None:
    # A bool mask raised inside cv2.remap; an int64 one came back int32.
    from perturb.albu import PaperWarp, Tilt

    img = np.full((200, 150, 3), 240, np.uint8)
    mask = np.zeros((200, 150), dtype)
    mask[50:100, 20:80] = 1
    for op in (Tilt(severity=1, p=1.0), PaperWarp(severity=2, p=1.0)):
        out = A.Compose([op], seed=1)(image=img, mask=mask)
        same = A.Compose([type(op)(severity=op.severity, p=1.0)], seed=1)(image=img, mask=mask.astype(np.uint8))
        assert out["mask"].dtype == mask.dtype and np.array_equal(out["mask"].astype(np.uint8), same["mask"])
