"""The albumentations wrapper's overhead: one op through ``perturb.albu`` vs the same op called directly.

Run: python benchmarks/albu_overhead.py [--runs 15] [--ops blur,tilt,shadow,jpeg,noise] [--size 1240x1754]

Both sides sample, apply and measure one op at severity 2 on the same page-sized photo (an A4 page at
150 dpi by default, printed text lines on paper): directly as ``perturb.photo.degrade_photo(image, page,
subtype, 2, rng)``, and as ``A.Compose([Op(severity=2, p=1.0)])(image=image)`` reseeded per call, with and
without a bounding box to move. Call k of each side draws the same params (the direct rng is the one the
wrapper derives from its seed), so the sides differ only by the wrapper. Each figure is the median of
``--runs`` timed calls after one warm-up, the sides interleaved (in turn first) so machine load hits
them alike; the ratio is wrapper / direct, and in brackets the same ratio of the fastest calls (less
sensitive to a loaded machine).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import albumentations as A  # noqa: E402  (perturb.albu sets NO_ALBUMENTATIONS_UPDATE; it is imported first below)

from perturb.albu import TRANSFORMS, page_for  # noqa: E402,I001
from perturb.photo import degrade_photo  # noqa: E402
from synth.seeding import stable_hash  # noqa: E402


def photo(width: int, height: int) -> np.ndarray:
    """A printed page: paper with lines of dark 'text' blocks, a little paper texture."""
    rng = np.random.default_rng(0)
    img = np.full((height, width, 3), 246, np.uint8)
    for y in range(120, height - 120, 60):
        x = 100
        while x < width - 200:
            w = int(rng.integers(20, 90))
            cv2.rectangle(img, (x, y), (x + w, y + 22), (25, 25, 30), -1)
            x += w + int(rng.integers(12, 30))
    noise = rng.normal(0, 2, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


def wrapper_rng(seed: int, subtype: str) -> np.random.Generator:
    """The generator a wrapped op samples from after ``set_random_seed(seed)`` (``perturb.albu._Photo._rng``)."""
    base = int(np.random.default_rng(seed).integers(2**63 - 1))
    return np.random.default_rng(np.random.SeedSequence(base, spawn_key=(stable_hash(subtype),)))


def seeded(compose: A.Compose, seed: int) -> A.Compose:
    compose.set_random_seed(seed)
    return compose


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--ops", default="blur,tilt,shadow,jpeg,noise")
    ap.add_argument("--size", default="1240x1754")
    args = ap.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    image = photo(width, height)
    page = page_for(width, height, 150)
    box = [(100, 120, 600, 142)]
    print(f"{width}x{height} px page, median of {args.runs} calls, severity 2")
    print(f"{'op':<10} {'direct ms':>10} {'albu ms':>9} {'ratio':>6} {'albu+bbox ms':>13} {'ratio':>6}")
    for subtype in args.ops.split(","):
        cls = TRANSFORMS[subtype]
        plain = A.Compose([cls(severity=2, p=1.0)], seed=1)
        boxed = A.Compose([cls(severity=2, p=1.0)], seed=1,
                          bbox_params=A.BboxParams(format="pascal_voc", label_fields=["labels"]))
        calls = {
            "direct": lambda s, t=subtype: degrade_photo(image, page, t, 2, wrapper_rng(s, t)),
            "albu": lambda s, c=plain: seeded(c, s)(image=image),
            "bbox": lambda s, c=boxed: seeded(c, s)(image=image, bboxes=box, labels=["line"]),
        }
        for fn in calls.values():
            fn(0)  # warm-up: caches, OpenCV's first-call setup
        times: dict[str, list[float]] = {k: [] for k in calls}
        keys = list(calls)
        for run in range(args.runs):
            for key in keys[run % 3:] + keys[:run % 3]:  # the order turns each run: no side always goes first
                times[key].append(timed(lambda fn=calls[key], run=run: fn(run + 1)))
        med = {k: statistics.median(v) * 1000 for k, v in times.items()}
        low = {k: min(v) * 1000 for k, v in times.items()}
        print(f"{subtype:<10} {med['direct']:>10.2f} {med['albu']:>9.2f} {med['albu'] / med['direct']:>6.3f} "
              f"{med['bbox']:>13.2f} {med['bbox'] / med['direct']:>6.3f}   (fastest: "
              f"{low['albu'] / low['direct']:.3f}, {low['bbox'] / low['direct']:.3f})")
    # The wrapper on its own: severity 0 is the identity, so this is Compose, sampling and the record.
    identity = A.Compose([TRANSFORMS["blur"](severity=0, p=1.0)], seed=1)
    alone = statistics.median(timed(lambda: identity(image=image)) for _ in range(args.runs)) * 1000
    print(f"wrapper alone (severity 0, the identity): {alone:.3f} ms per call")


if __name__ == "__main__":
    main()
