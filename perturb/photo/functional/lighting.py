"""Lighting kernels: light falling on the flat sheet as one affine map per pixel, built at low resolution.

Shadow and glare are fields on a coarse grid of the page (``grid``), composed into one ``Light`` and
applied in one pass; the exposure's vignette goes through the same pass before its tone curve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from perturb.photo.worker import beside, in_halves, worth_halving

# Lighting varies slowly across a page, so fields are built on a grid this many times coarser.
FIELD_STEP = 8


def grid(height: int, width: int, step: int = FIELD_STEP) -> tuple[np.ndarray, np.ndarray]:
    """Pixel coordinates (x, y) of a coarse grid covering the image, cell centres included."""
    gh, gw = max(2, -(-height // step)), max(2, -(-width // step))
    ys = (np.arange(gh, dtype=np.float32) + 0.5) * (height / gh) - 0.5
    xs = (np.arange(gw, dtype=np.float32) + 0.5) * (width / gw) - 0.5
    return np.meshgrid(xs, ys)


def wrap(values: np.ndarray, period: float) -> np.ndarray:
    """``values`` folded into [0, period], in their own precision: numpy's ``mod`` for positive periods (up to
    a rounding at the top end), without its per-element remainder call (about 15x faster)."""
    return values - np.floor(values / period) * period


def upsample(field: np.ndarray, height: int, width: int) -> np.ndarray:
    return cv2.resize(field.astype(np.float32), (width, height), interpolation=cv2.INTER_LINEAR)


def gain_u8(gain: np.ndarray) -> tuple[np.ndarray, float]:
    """A gain field as 8-bit fixed point and the scale that turns it back into gains.

    8-bit gains make the full-size multiply (and upsampling) several times cheaper than float32
    ones. The largest gain maps to 255 (gains up to 1 map 1 to 255): steps of 1/255 of the largest
    gain, about one grey level on white paper for the gains the ops use (at most 1.03, a sheet
    turned to the light; a gain of 2 would step by two levels).
    """
    unit = float(int(255.0 / max(1.0, float(gain.max()))))  # whole, so a plane of gain 1 is exactly `unit`
    return np.clip(gain * unit + 0.5, 0, 255).astype(np.uint8), 1.0 / unit


@dataclass(frozen=True)
class Light:
    """Pointwise lighting as one affine map per pixel and channel: ``y = gain * x + 255 * lift``.

    Both fields live on a coarse grid of the page (``grid``), as (gh, gw) or (gh, gw, 3) arrays; None
    means gain 1 or lift 0. A lamp's shadow scales the light (``times``); glare and over-exposure wash
    the print out towards white, scaling each pixel's darkness 255 - v (``wash``). Consecutive lighting
    composes into one such map (``then``), so a shadow, a glare and a bent sheet's shading cost one
    upsampled multiply and one add on the page, however many there are.
    """

    gain: np.ndarray | None = None
    lift: np.ndarray | None = None

    def then(self, after: Light) -> Light:
        """This lighting, then ``after``: g2 (g1 x + 255 l1) + 255 l2."""
        gain = _product(self.gain, after.gain)
        lift = self.lift if after.gain is None or self.lift is None else _product(self.lift, after.gain)
        lift = after.lift if lift is None else lift if after.lift is None else _sum(lift, after.lift)
        return Light(gain, lift)

    def times(self, gain: np.ndarray) -> Light:
        return self.then(Light(np.asarray(gain, np.float32)))

    def wash(self, gain: np.ndarray) -> Light:
        """Scale the darkness (255 - v) by ``gain``: v -> gain v + 255 (1 - gain)."""
        g = np.asarray(gain, np.float32)
        return self.then(Light(g, 1.0 - g))

    def apply(self, image: np.ndarray, curve: np.ndarray | None = None,
              then: Callable[[np.ndarray, slice], None] | None = None,
              source: Callable[[slice], np.ndarray] | None = None) -> np.ndarray:
        """The lit image: the fields upsampled to it in 8-bit (see ``gain_u8``), one multiply and one add.

        ``curve`` (256 uint8 levels) is a tone curve looked up after the lighting (exposure's). ``then(out, rows)``
        works on each band of rows of the lit image in place as soon as it is lit, on the same thread (the sensor's
        noise: ``camera.grain_band``), while the band is still in the cache. ``source(rows)`` gives the band of
        pixels to light in place of ``image[rows]`` (``image`` still gives the size): per-pixel work on the photo
        before the light, done band by band with it (over-exposure's bloom: ``bloom_rows``).
        """
        h, w = image.shape[:2]
        band = (lambda r: image[r]) if source is None else source
        if self.gain is None and self.lift is None:
            if then is None and source is None:
                return image if curve is None else cv2.LUT(image, curve)
            out = np.empty_like(image)

            def unlit(r: slice) -> None:
                if curve is None:
                    out[r] = band(r)
                else:
                    cv2.LUT(band(r), curve, dst=out[r])
                if then is not None:
                    then(out, r)

            in_halves(unlit, h)
            return out
        gain, scale = (None, 1.0) if self.gain is None else gain_u8(self.gain)
        lift = None if self.lift is None else np.clip(self.lift * 255.0 + 0.5, 0, 255).astype(np.uint8)
        if gain is not None and lift is not None and worth_halving(h):
            # Two fields to upsample (OpenCV's resize runs on one core): the lift beside, the gain here.
            pending = beside(_full, lift, h, w)
            gain, lift = _full(gain, h, w), pending.result()
        else:
            gain = None if gain is None else _full(gain, h, w)
            lift = None if lift is None else _full(lift, h, w)
        out = np.empty_like(image)

        def rows(r: slice) -> None:  # the per-pixel arithmetic is serial in OpenCV: two halves side by side
            pixels = band(r)
            if gain is None:
                cv2.add(pixels, lift[r], dst=out[r])
            elif lift is None:
                cv2.multiply(pixels, gain[r], dst=out[r], scale=scale)
            else:
                cv2.add(cv2.multiply(pixels, gain[r], scale=scale), lift[r], dst=out[r])
            if curve is not None:
                cv2.LUT(out[r], curve, dst=out[r])
            if then is not None:
                then(out, r)

        in_halves(rows, h)
        return out


def _product(a: np.ndarray | None, b: np.ndarray | None) -> np.ndarray | None:
    if a is None or b is None:
        return b if a is None else a
    a, b = (a[..., None], b) if a.ndim < b.ndim else (a, b[..., None]) if b.ndim < a.ndim else (a, b)
    return (a * b).astype(np.float32)


def _sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = (a[..., None], b) if a.ndim < b.ndim else (a, b[..., None]) if b.ndim < a.ndim else (a, b)
    return (a + b).astype(np.float32)


def _full(small: np.ndarray, height: int, width: int) -> np.ndarray:
    """An 8-bit field upsampled to three full-size planes; a grey field is upsampled as one plane and
    then copied into three (a third of the interpolation)."""
    if small.ndim == 3:
        return cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR)
    return cv2.cvtColor(cv2.resize(small, (width, height), interpolation=cv2.INTER_LINEAR), cv2.COLOR_GRAY2RGB)


# ------------------------------------------------------------------------------ shadow


def shadow_parts(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int,
                  height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The parts of the shadow that do not move with its offset: position across the edge (before the
    offset), penumbra width, and the light leak. Sampling slides the offset over them many times."""
    a = float(np.deg2rad(float(params["direction_deg"])))
    # Python floats, so float32 grids stay float32 (numpy scalars would promote every plane to float64: the
    # edge's sines alone cost twice as much there).
    c, s = float(np.cos(a)), float(np.sin(a))
    u, v = xs / width - 0.5, ys / width - 0.5 * height / width  # width-relative coordinates
    along = u * c + v * s
    across = -u * s + v * c
    edge = sum(amp * np.sin(freq * across + phase) for amp, freq, phase in params["edge_waves"])
    # The penumbra widens from the end of the edge nearest the occluder to the far end.
    reach = 0.5 * float(np.hypot(1.0, height / width))  # half the diagonal: |across| stays below it on the page
    t = np.clip((float(params["near_end"]) * across / reach + 1.0) / 2.0, 0.0, 1.0)
    near = float(params["penumbra_near"])
    width_at = near * (1.0 + (float(params["penumbra_growth"]) - 1.0) * t)
    # Light leaking round the occluder makes the shadow uneven, lighter in broad low-frequency patches.
    leak = 1.0 - float(params["unevenness"]) * (0.5 + 0.5 * np.sin(2.2 * across + 1.3 * along
                                                                  + float(params["leak_phase"])))
    return along + edge, 2.0 / width_at, leak


def strength_at(position: np.ndarray, inv_half_width: np.ndarray, leak: np.ndarray, offset: float) -> np.ndarray:
    """Shadow strength where the edge sits at ``offset``, from ``shadow_parts``."""
    # An area light's penumbra falls off smoothly with long tails (tanh), not with a hard ramp.
    return ((0.5 + 0.5 * np.tanh((position - offset) * inv_half_width)) * leak).astype(np.float32)


def shadow_strength(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    """0 (lit) .. 1 (full shadow) at page pixel coordinates."""
    return strength_at(*shadow_parts(params, xs, ys, width, height), float(params["offset"]))


def shadow_gain(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    s = shadow_strength(params, xs, ys, width, height)
    tint = np.asarray(params["tint"], np.float32)  # shadows in room light are slightly cool
    return (1.0 - float(params["depth"]) * s[..., None] * tint).astype(np.float32)


def shadow_light(params: dict[str, Any], width: int, height: int) -> Light:
    """The shadow as lighting of a ``width`` x ``height`` page: a (cool-tinted) gain on the field grid."""
    xs, ys = grid(height, width)
    return Light(shadow_gain(params, xs, ys, width, height))


# ------------------------------------------------------------------------------ glare


def glare_field(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int) -> np.ndarray:
    """Wash-out 0..1: a saturated elliptical core with a soft halo, radii as fractions of width."""
    cx, cy = params["centre_frac"]
    a = np.deg2rad(float(params["angle_deg"]))
    u, v = xs / width - cx, ys / width - cy
    r = float(params["radius_frac"])
    du = (u * np.cos(a) + v * np.sin(a)) / (r * float(params["aspect"]))
    dv = (-u * np.sin(a) + v * np.cos(a)) / r
    d2 = du * du + dv * dv
    core = np.clip(1.35 * np.exp(-d2), 0.0, 1.0) * float(params["peak"])
    halo = float(params["halo"]) * np.exp(-d2 / 6.0)
    return np.clip(core + halo * (1 - core), 0.0, 1.0).astype(np.float32)


def glare_light(params: dict[str, Any], width: int, height: int) -> Light:
    """The glare as lighting of a ``width`` x ``height`` page: it washes the print's darkness out."""
    # v + (255 - v) * g == 255 - (255 - v) * (1 - g): the glare washes the darkness out.
    xs, ys = grid(height, width)
    return Light().wash(1.0 - glare_field(params, xs, ys, width))


# ------------------------------------------------------------------------------ exposure


def vignette(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    """Metering falls off from an off-centre hot spot, as phone exposure does across a page."""
    cx, cy = params["hotspot_frac"]
    d2 = ((xs / width - cx) ** 2 + (ys / height - cy) ** 2) / 0.5
    return (1.0 - float(params["falloff"]) * d2).astype(np.float32)


def exposure_gain(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    """The exposure's light across the frame: the metering's vignette and, over-exposed, a lamp's blow-out.

    A bright lamp over the desk does not over-expose a page evenly: where it is nearest (``lamp_frac``, a broad
    round patch of radius ``lamp_radius`` of the width) the darkness left falls by up to ``blowout`` more, so the
    writing there clips to white first while the rest keeps some contrast ("partly hides content"). Records
    without the key (written before it) replay without a lamp."""
    light = vignette(params, xs, ys, width, height)
    blow = float(params.get("blowout", 0.0)) if params["kind"] == "over" else 0.0
    if blow > 0:
        light = light * (1.0 - blow * lamp_patch(params, xs, ys, width, height))
    return light.astype(np.float32)


def lamp_patch(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    """The over-exposing lamp's patch (``exposure_gain``): 1 at its centre, falling off over its radius."""
    lx, ly = params["lamp_frac"]
    d2 = ((xs - lx * width) ** 2 + (ys - ly * height) ** 2) / (float(params["lamp_radius"]) * width) ** 2
    return np.exp(-0.5 * d2)


def expose(image: np.ndarray, params: dict[str, Any], width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """The photo of ``image`` (a raster of a ``width`` x ``height`` frame) metered under or over, before its
    sensor noise: a vignetted tone curve of strength ``k`` and power ``gamma``. Under-exposure lifts the blacks
    (``black_lift``); over-exposure clips everything lighter than ``white_point`` to 255 and blooms (light
    spreads into thin dark strokes first). Returns the image and the noise spread at each output level
    (``exposure_noise``), which the caller adds (``camera.add_noise``)."""
    k, gamma = float(params["k"]), float(params["gamma"])
    x = np.arange(256, dtype=np.float64) / 255
    light = exposure_gain(params, *grid(height, width), width, height)
    # The vignette scales the curved print (under) or its remaining darkness (over, so the wash stays
    # bright). Through a power curve that is the same as scaling the input by the vignette to the power
    # 1/gamma first: k (g^(1/gamma) v)^gamma = g k v^gamma. So one lighting pass, then one lookup.
    lit = Light().times(light ** (1.0 / gamma))
    if params["kind"] == "under":
        lift = float(params["black_lift"])
        curve = np.clip((lift + k * x**gamma) * 255 + 0.5, 0, 255).astype(np.uint8)
        return lit.apply(image, curve), exposure_noise(params, curve)
    # Over-exposure works in darkness d = 255 - v: v' = 255 (1 - max(0, k (d/255)^gamma - c)), where c puts the
    # clipping point at ``white_point`` darkness. Bloom first: each pixel's darkness falls towards the blurred
    # light around it (never rises), so hairlines wash out before bold strokes do.
    dark = cv2.bitwise_not(image)
    bloom = float(params.get("bloom", 0.0))
    if bloom > 0:
        h, w = dark.shape[:2]
        # An even crop: OpenCV's area resize halves an even image on its fast path (under 1 ms on a page), an
        # odd-sized photo (the camera's frame) on its general one (12-20 ms).
        hh, hw = max(1, h // 2), max(1, w // 2)
        small = cv2.resize(dark[:2 * hh, :2 * hw], (hw, hh), interpolation=cv2.INTER_AREA)
        spread = cv2.resize(cv2.GaussianBlur(small, (0, 0), float(params["bloom_px"]) / 2), (w, h),
                            interpolation=cv2.INTER_LINEAR)
        dark = cv2.min(dark, cv2.addWeighted(dark, 1.0 - bloom, spread, bloom, 0.0))
    c = k * float(params["white_point"]) ** gamma
    curve = np.clip((1 - np.maximum(0.0, k * x**gamma - c)) * 255 + 0.5, 0, 255).astype(np.uint8)
    return lit.apply(dark, curve), exposure_noise(params, curve[::-1].copy())


def exposure_light(params: dict[str, Any], width: int, height: int) -> tuple[Light, np.ndarray, np.ndarray]:
    """``expose`` as lighting for the pass that lights the scene: its vignette as a ``Light`` on this frame, its
    tone curve on the brightness (256 levels), and the noise spread at each output level (``exposure_noise``).
    Over-exposure's bloom is not in it (``bloom``, applied to the photo first).

    Under-exposure scales the brightness by the vignette, over-exposure the darkness (a wash), each to the power
    1/gamma (see ``expose``); over-exposure's curve, written on the darkness, is read on the brightness reversed.
    """
    k, gamma = float(params["k"]), float(params["gamma"])
    x = np.arange(256, dtype=np.float64) / 255
    light = exposure_gain(params, *grid(height, width), width, height) ** (1.0 / gamma)
    if params["kind"] == "under":
        lift = float(params["black_lift"])
        curve = np.clip((lift + k * x**gamma) * 255 + 0.5, 0, 255).astype(np.uint8)
        return Light().times(light), curve, exposure_noise(params, curve)
    c = k * float(params["white_point"]) ** gamma
    curve = np.clip((1 - np.maximum(0.0, k * x**gamma - c)) * 255 + 0.5, 0, 255).astype(np.uint8)
    on_brightness = curve[::-1].copy()
    return Light().wash(light), on_brightness, exposure_noise(params, on_brightness)


def bloom(image: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Over-exposure's bloom on a photo: each pixel's darkness falls towards the blurred light around it (never
    rises), so hairlines wash out before bold strokes do; the image itself when there is none."""
    rows = bloom_rows(image, params)
    return image if rows is None else rows(slice(0, image.shape[0]))


def bloom_rows(image: np.ndarray, params: dict[str, Any]) -> Callable[[slice], np.ndarray] | None:
    """``bloom`` band by band: the light's spread found once (at half size, upsampled), then each band of rows of
    the bloomed photo when asked for (``Light.apply(..., source=)``: in the pass that lights it, on two threads);
    None when there is no bloom. Per pixel the same arithmetic as ``bloom``, so the same bytes."""
    amount = float(params.get("bloom", 0.0)) if params["kind"] == "over" else 0.0
    if amount <= 0:
        return None
    h, w = image.shape[:2]
    hh, hw = max(1, h // 2), max(1, w // 2)  # an even crop: OpenCV's fast path for halving (see ``expose``)
    small = cv2.resize(image[:2 * hh, :2 * hw], (hw, hh), interpolation=cv2.INTER_AREA)
    # The light that spreads is the white paper's around the strokes: its brightness (one plane, a third of the
    # blurring and upsampling), mixed into every channel.
    if small.ndim == 3:
        small = cv2.cvtColor(small, cv2.COLOR_RGB2GRAY)
    spread = cv2.resize(cv2.GaussianBlur(small, (0, 0), float(params["bloom_px"]) / 2), (w, h),
                        interpolation=cv2.INTER_LINEAR)

    def rows(r: slice) -> np.ndarray:
        band, light = image[r], spread[r]
        if image.ndim == 3:
            light = cv2.cvtColor(light, cv2.COLOR_GRAY2RGB)
        # In brightness: v -> max(v, (1 - b) v + b spread), the darkness version's min.
        return cv2.max(band, cv2.addWeighted(band, 1.0 - amount, light, amount, 0.0))

    return rows


def exposure_noise(params: dict[str, Any], curve: np.ndarray) -> np.ndarray:
    """Noise spread (grey levels) at each output level of an exposure's tone ``curve`` (input level -> output).

    Sensor noise (shot noise growing with the light, read noise in the blacks) comes before the tone curve, and
    the curve scales it by its slope: to first order that is noise of spread slope x sensor spread added after
    the curve, which is what ``camera.add_noise`` does per output level. ``noise_paper`` is the spread on the
    paper; blown-out white (255) has none.
    """
    levels = np.arange(256, dtype=np.float64)
    out = curve.astype(np.float64)
    slope = np.gradient(out)
    sensor = np.sqrt(0.02 + levels / 255)  # read noise, then shot noise in proportion to the square root of light
    spread = slope * sensor
    order = np.argsort(out, kind="stable")
    at_output = np.interp(levels, out[order], spread[order])  # the spread at each output level
    paper = float(np.interp(0.9 * 255, levels, out))  # where the photo's paper lands on the curve
    at_paper = float(np.interp(paper, levels, at_output))
    if at_paper < 0.05 * float(at_output.max()):  # the paper clipped (over-exposed): scale on the brightest grain
        at_paper = float(at_output.max())
    table = float(params["noise_paper"]) * np.maximum(at_output / max(at_paper, 1e-6), 0.35)
    table[255] = 0.0
    return table.astype(np.float32)


# ------------------------------------------------------------------------------ the camera's base layer


def sample_base(rng: np.random.Generator) -> dict[str, Any]:
    """What every photo has, whatever its ops: the room's uneven light, the paper's own texture, the sensor's
    grain. Mild on purpose: a clean photo of a page, not a degradation (photos of white paper sit at 215-245)."""
    return {"level": round(float(rng.uniform(0.88, 0.97)), 4),
            "gradient": [round(float(rng.uniform(-0.07, 0.07)), 4), round(float(rng.uniform(-0.07, 0.07)), 4)],
            "falloff": round(float(rng.uniform(0.04, 0.12)), 4),
            "centre_frac": [round(float(rng.uniform(0.3, 0.7)), 4), round(float(rng.uniform(0.3, 0.7)), 4)],
            "tint": [round(float(rng.uniform(0.985, 1.02)), 4), 1.0, round(float(rng.uniform(0.95, 1.0)), 4)],
            "mottle": round(float(rng.uniform(0.004, 0.009)), 4), "mottle_seed": int(rng.integers(2**31 - 1)),
            "noise_sigma": round(float(rng.uniform(1.2, 2.2)), 3), "noise_seed": int(rng.integers(2**31 - 1))}


def scene_gain(params: dict[str, Any], xs: np.ndarray, ys: np.ndarray, width: int, height: int) -> np.ndarray:
    """The room's light across the photo (desk and sheet alike): a level, a tilt towards the window and a
    soft fall-off away from the brightest spot, tinted (gh, gw, 3)."""
    gx, gy = params["gradient"]
    cx, cy = params["centre_frac"]
    u, v = xs / width - 0.5, ys / height - 0.5
    d2 = (xs / width - cx) ** 2 + (ys / height - cy) ** 2
    g = float(params["level"]) * (1.0 + gx * u + gy * v) * (1.0 - float(params["falloff"]) * d2 / 0.5)
    return (g[..., None] * np.asarray(params["tint"], np.float32)).astype(np.float32)


def paper_mottle(params: dict[str, Any], px: np.ndarray, py: np.ndarray, page_width: int) -> np.ndarray:
    """The sheet's cloudy fibre texture at sheet points (px, py, page units): two octaves of smooth value
    noise, cells of 1/45 and 1/12 of the page width, around 1."""
    rng = np.random.default_rng(int(params["mottle_seed"]))
    out = np.zeros(px.shape, np.float32)
    for cells, weight in ((60, 0.8), (14, 0.6)):
        cell = page_width / cells
        n = cells * 2 + 4
        table = rng.standard_normal((n, n)).astype(np.float32)
        mx = wrap((px / cell + 1.0).astype(np.float32), n - 2)
        my = wrap((py / cell + 1.0).astype(np.float32), n - 2)
        out += weight * cv2.remap(table, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
    return (1.0 + float(params["mottle"]) * out).astype(np.float32)
