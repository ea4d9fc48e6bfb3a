"""Pure kernels of the photo ops, one module per op group: params and pixels in, pixels (or maps) out.

The albumentations shape: an op module *samples* its params (``sample_params``: rng, severity, page),
*applies* them by calling a kernel here, and *measures* the effect with ``perturb.photo.measure``.
Kernels never draw random numbers from a generator they are handed (a recorded seed in the params is
theirs to use), never measure, and give the same bytes for the same inputs, so each can be replayed,
fused and benchmarked alone.

- ``lighting``: light on the flat sheet (shadow, glare, the exposure's vignette and curve) as ``Light``;
- ``geometric``: the sheet's shape and the camera's pose as ``Warp`` maps, one remap for a chain, the desk;
- ``camera``: the phone's own processing (blur, resolution, sensor noise, JPEG);
- ``ink``: what is on or through the sheet (pen marks over the print, the reverse page showing through).

A new op whose kernel nothing else shares may keep it in its own module.
"""
