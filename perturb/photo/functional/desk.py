"""The desk under the sheet: procedural wood, laminate or cloth (and something left at the frame's edge), drawn in
the desk's plane at a twelfth of the photo's resolution and seen through the camera's pose (``desk_image``).

Split from ``geometric`` (which lays the sheet over it, ``remap_chain``); nothing here knows about warps, only the
homography from the desk's plane to the photo (``geometric.desk_plane``).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from perturb.photo.functional.lighting import wrap


def _noise(rng: np.random.Generator, x: np.ndarray, y: np.ndarray, cells: int = 64) -> np.ndarray:
    """Smooth value noise (std about 1) at points (x, y) measured in cells: a wrapped random table, cubic."""
    table = rng.standard_normal((cells, cells)).astype(np.float32)
    # The noise tiles every ``cells`` cells: coordinates folded into the table (OpenCV's own wrapping only
    # reaches one table beyond its edge), its edge interpolated across (BORDER_WRAP).
    cells32 = np.float32(cells)
    return cv2.remap(table, wrap(np.asarray(x, np.float32), cells32), wrap(np.asarray(y, np.float32), cells32),
                     cv2.INTER_CUBIC, borderMode=cv2.BORDER_WRAP)


def resolved(width: float, texel: float) -> float:
    """How much of a pattern's contrast survives being drawn on texels ``texel`` wide (both in page widths), for
    detail ``width`` wide (a dark band's width, a noise cell): all of it from two texels up, none below half a texel.
    A point sample of finer detail aliases into speckle (a plank's grain lines drawn as rows of dots); a camera
    averages it away, so it fades to its mean instead."""
    if texel <= 0.0:
        return 1.0
    return float(np.clip((width / texel - 0.5) / 1.5, 0.0, 1.0))


def desk_texture(params: dict[str, Any], x: np.ndarray, y: np.ndarray, texel: float = 0.0) -> np.ndarray:
    """The desk's colour (h, w, 3 float32, 0-255) at desk points (x, y) in page widths: wood planks with
    grain and streaks, laminate with fine speckle, or woven cloth (plain or checked). ``texel`` (page widths) is
    the spacing of the points: detail finer than it fades to its mean (``resolved``) instead of aliasing."""
    rng = np.random.default_rng(int(params["desk_seed"]))
    kind = params.get("desk_kind", "wood")
    a = float(np.deg2rad(float(params.get("desk_grain_angle_deg", 0.0))))
    c, s = float(np.cos(a)), float(np.sin(a))  # python floats: the float32 planes stay float32
    u, v = x * c + y * s, y * c - x * s  # along and across the grain
    rgb = np.asarray(params["desk_rgb"], np.float32)
    if kind == "wood":
        plank_w = float(rng.uniform(0.22, 0.5))
        plank = np.floor(v / plank_w)
        offsets, tones = rng.uniform(0, 50, 97).astype(np.float32), rng.uniform(0.9, 1.08, 97).astype(np.float32)
        idx = plank.astype(np.int64) % 97
        bend = _noise(rng, u * 2.0, v * 9.0)
        # Flat-sawn grain: soft late-wood bands 8-17 mm apart on an A4 sheet's scale, wavering along the plank.
        spacing = 1.0 / float(rng.uniform(12, 26))
        ring_contrast = 0.12 * resolved(0.25 * spacing, texel)
        late_mean = 0.14 * float(np.sqrt(np.pi))  # the band's mean over a period: what an unresolved grain shows
        streak = _noise(rng, u * 4.0, v * 70.0)  # fine streaks along the grain, cells 1/70 of a page across
        rest = 1.0 - 0.12 * late_mean + 0.035 * resolved(1 / 70, texel) * streak + 0.03 * _noise(rng, u * 3, v * 3)

        def plank_tone(k: np.ndarray) -> np.ndarray:
            """The tone of plank ``k`` (its index mod 97): its shade, and its grain's rings at its own phase."""
            rings = wrap(v / spacing + offsets[k] + 0.9 * bend, 1.0)
            return tones[k] * (rest - ring_contrast * (np.exp(-(((rings - 0.7) / 0.14) ** 2)) - late_mean))

        tone = plank_tone(idx)
        across = wrap(v, plank_w)
        edge = np.minimum(across, plank_w - across)
        if texel > 0:
            # Where planks meet, a texel straddling the joint shows both (the share of its width on each side): a
            # point-sampled step in shade and grain drew the joint as a staircase of texels, a sawtooth once warped.
            near = np.clip(0.5 - edge / texel, 0.0, 0.5).astype(np.float32)
            if near.any():
                other = (idx + np.where(across < plank_w / 2, -1, 1)) % 97
                tone = tone + near * (plank_tone(other) - tone)
        # The joint between planks: a dark line 0.5 mm wide, drawn at least a texel wide and fainter by as much
        # (the same darkness over the line, as a camera that cannot resolve it sees it).
        joint = max(0.0025, texel)
        tone = tone * (1.0 - 0.4 * (0.0025 / joint) * np.exp(-((edge / joint) ** 2)))
        # Darker wood is more saturated: blue falls faster than red (a linear stand-in for tone ** (0.85, 1, 1.2)).
        colour = rgb[None, None, :] * (tone[..., None] * np.array([0.85, 1.0, 1.2], np.float32)
                                       + np.array([0.15, 0.0, -0.2], np.float32))
    elif kind == "fabric":
        p = float(rng.uniform(0.012, 0.02))  # a coarse weave (tablecloth, burlap): resolved at the desk's resolution
        over = np.sin(np.pi * u / p) * np.sin(np.pi * v / p) > 0
        weave = np.where(over, np.sin(2 * np.pi * u / p), np.sin(2 * np.pi * v / p))
        tone = (1.0 + 0.07 * resolved(p / 2, texel) * weave + 0.04 * _noise(rng, u * 4, v * 4)
                + 0.03 * resolved(1 / 300, texel) * _noise(rng, u * 300, v * 300))
        colour = rgb[None, None, :] * tone[..., None]
        if rng.random() < 0.4:  # a checked tablecloth: every other band of each direction paler
            q = float(rng.uniform(0.04, 0.08))
            # Each direction's bands as a square wave whose steps are a texel wide (a point-sampled hard step
            # draws a staircase): 1 on every other band, 0 between.
            sharp = 2 * q / (np.pi * texel) if texel > 0 else 1e6
            bands = (1.0 - 0.5 * np.clip(sharp * np.sin(np.pi * u / q), -1, 1)
                     - 0.5 * np.clip(sharp * np.sin(np.pi * v / q), -1, 1)).astype(np.float32)
            colour = colour + (235.0 - colour) * (0.45 * bands)[..., None]
    else:  # laminate: flat colour, broad sheen, fine speckle
        fine = _noise(rng, x * 400, y * 400)
        tone = 1.0 + 0.025 * _noise(rng, x * 3, y * 3) + resolved(1 / 400, texel) * (0.012 * fine - 0.06 * (fine > 2.2))
        colour = rgb[None, None, :] * tone[..., None]
    return colour.astype(np.float32)


_CLUTTER = {"pencil": ((226, 178, 40), (0.5, 0.022)), "pen": ((40, 60, 140), (0.45, 0.02)),
            "eraser": ((228, 140, 150), (0.09, 0.045)), "notebook": ((70, 110, 160), (0.8, 0.55)),
            "sticky_note": ((240, 224, 110), (0.12, 0.12)), "phone": ((28, 28, 32), (0.22, 0.45))}


def _clutter(params: dict[str, Any], to_photo: np.ndarray, frame_px: tuple[int, int],
             page_width: int) -> tuple[np.ndarray, tuple[float, float, float]]:
    """A thing left at the edge of the frame (pencil, pen, eraser, notebook, sticky note, phone): its outline in the
    desk's plane (page px, 4 x 2), so it shares the sheet's perspective, and its colour."""
    rng = np.random.default_rng(int(params["desk_seed"]) + 1)
    name = str(params["clutter"])
    colour, (length, width) = _CLUTTER[name]
    fw, fh = frame_px
    side = int(rng.integers(4))
    t = float(rng.uniform(0.15, 0.85))
    at = [(t * fw, 0.02 * fh), (0.98 * fw, t * fh), (t * fw, 0.98 * fh), (0.02 * fw, t * fh)][side]
    c = cv2.perspectiveTransform(np.array([[at]], np.float64), np.linalg.inv(to_photo))[0, 0]
    ang = float(rng.uniform(0, np.pi))
    half = np.array([length, width]) / 2 * page_width
    d = np.array([[np.cos(ang), np.sin(ang)], [-np.sin(ang), np.cos(ang)]])
    box = c + (np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * half) @ d
    shade = float(rng.uniform(0.85, 1.05))
    return box, tuple(float(v) for v in np.clip(np.asarray(colour, np.float64) * shade, 0, 255))


def _coverage(corners: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """How much of each pixel of an image of ``shape`` the polygon ``corners`` (px) covers, 0-1: OpenCV anti-aliases a
    filled polygon on 8-bit images only (on a float image LINE_AA fills whole pixels, a staircase)."""
    cover = np.zeros(shape, np.uint8)
    cv2.fillPoly(cover, [np.round(corners * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return cover.astype(np.float32) / 255.0


def _clutter_shadow(tex: np.ndarray, box_tex: np.ndarray) -> None:
    """The soft shadow a thing casts on the desk texture (its outline ``box_tex`` in texels), in place."""
    shadow = cv2.GaussianBlur(_coverage(box_tex + 3, tex.shape[:2]), (0, 0), 3)
    tex *= (1.0 - 0.35 * shadow)[..., None]


def lay_clutter(photo: np.ndarray, box_photo: np.ndarray, colour: tuple[float, float, float]) -> None:
    """The thing itself on the full-size desk ``photo`` (uint8 RGB, in place), its outline ``box_photo`` (photo px)
    anti-aliased at the photo's resolution: on the same plane as the sheet, its edge is as sharp as the sheet's
    (drawn into the texture, it came out a twelfth of the resolution, blurred over a dozen pixels beside the crisp
    sheet). Only the box's bounding rectangle is touched."""
    h, w = photo.shape[:2]
    x0, y0 = np.maximum(np.floor(box_photo.min(axis=0)).astype(int) - 1, 0)
    x1, y1 = np.minimum(np.ceil(box_photo.max(axis=0)).astype(int) + 2, [w, h])
    if x1 <= x0 or y1 <= y0:
        return
    roi = photo[y0:y1, x0:x1]  # a view: OpenCV blends the anti-aliased outline into the desk beneath, in place
    cv2.fillPoly(roi, [np.round((box_photo - [x0, y0]) * 16).astype(np.int32)], colour, cv2.LINE_AA, shift=4)


def desk_image(params: dict[str, Any], height: int, width: int, to_photo: np.ndarray, page_width: int,
               clutter_box: np.ndarray | None = None) -> np.ndarray:
    """The desk as the camera sees it, at quarter resolution of a ``height`` x ``width`` photo (uint8 RGB).

    Its texture is drawn in the desk's plane over the part the frame sees, then warped by the same homography
    as the sheet (``desk_plane``): planks converge with the sheet's edges under a keystone. ``clutter_box`` is the
    outline ``_clutter`` gives for this frame (``desk_photo`` has it already), for the shadow under the thing.
    """
    qh, qw = max(2, height // 4), max(2, width // 4)
    to_q = np.diag([qw / width, qh / height, 1.0]) @ to_photo
    inv = np.linalg.inv(to_q)
    corners = np.array([[[0, 0]], [[qw, 0]], [[qw, qh]], [[0, qh]]], np.float64)
    seen = cv2.perspectiveTransform(corners, inv).reshape(-1, 2)
    # Desk units per texel: three quarter pixels (a twelfth of the photo's resolution, the desk is out of the reading
    # area), at the origin; the warp below interpolates it up. (Six photo pixels drew a cloth's weave and a plank's
    # grain as sharp as the print beside them, but took desk_photo from 5.2 to 11.8 ms and the phone chain's
    # remap_chain from 40 to 47 ms, where the chain is 3x faster than albumentations by a thin margin: round 11.)
    texel = 3.0 * float(np.sqrt(abs(np.linalg.det(inv[:2, :2])) or 1.0))
    lo, hi = seen.min(axis=0), seen.max(axis=0)
    span = np.minimum(hi - lo, 800 * texel)
    tw, th = (int(np.ceil(s / texel)) + 2 for s in span)
    xs = (lo[0] + (np.arange(tw, dtype=np.float32) + 0.5) * texel) / page_width
    ys = (lo[1] + (np.arange(th, dtype=np.float32) + 0.5) * texel) / page_width
    x, y = np.meshgrid(xs, ys)
    tex = desk_texture(params, x, y, texel / page_width)
    to_tex_from_desk = np.array([[1 / texel, 0, -lo[0] / texel], [0, 1 / texel, -lo[1] / texel], [0, 0, 1]])
    if params.get("clutter"):  # its shadow on the texture; the thing itself at full size (``desk_photo``)
        box = _clutter(params, to_photo, (width, height), page_width)[0] if clutter_box is None else clutter_box
        _clutter_shadow(tex, cv2.perspectiveTransform(box[None], to_tex_from_desk)[0])
    m = to_q @ np.linalg.inv(to_tex_from_desk)
    tex_u8 = np.clip(tex + 0.5, 0, 255).astype(np.uint8)
    return cv2.warpPerspective(tex_u8, m, (qw, qh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)


def desk_photo(params: dict[str, Any], height: int, width: int, to_photo: np.ndarray, page_width: int) -> np.ndarray:
    """The desk at the photo's full resolution (``desk_image`` upsampled, and the thing left on it drawn at this
    resolution), for the sheet to be remapped onto."""
    box, colour = _clutter(params, to_photo, (width, height), page_width) if params.get("clutter") else (None, None)
    photo = cv2.resize(desk_image(params, height, width, to_photo, page_width, box), (width, height),
                       interpolation=cv2.INTER_LINEAR)
    if box is not None:
        lay_clutter(photo, cv2.perspectiveTransform(box[None], to_photo)[0], colour)
    return photo
