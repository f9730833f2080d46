"""What JAX runs on: the devices in words for the home page, and the memory runs may use."""

from __future__ import annotations

import math
import os

import jax

from rnnlab.i18n import join_list, tn


def describe_devices() -> dict[str, str]:
    """Backend ('cpu', 'gpu', 'tpu'), the devices JAX sees, and the versions in use."""
    import flax

    devices = jax.devices()
    kinds = sorted({d.device_kind for d in devices})
    return {"backend": jax.default_backend().upper(), "count": str(len(devices)), "kinds": ", ".join(kinds),
            "versions": f"jax {jax.__version__}, flax {flax.__version__}"}


def devices_sentence() -> str:
    """The Home page's sentence on the devices in use, in the reader's language."""
    info = describe_devices()
    # TRANSLATORS: {backend} is CPU, GPU or TPU; {kinds} the devices' names; {versions} "jax 0.4.35, flax 0.10.2".
    return tn("Runs on this server's {backend} ({n} device: {kinds}; {versions}): every step is compiled once by "
              "JAX and then runs as fast machine code.",
              "Runs on this server's {backend} ({n} devices: {kinds}; {versions}): every step is compiled once by "
              "JAX and then runs as fast machine code.",
              int(info["count"]), backend=info["backend"], kinds=info["kinds"],
              versions=join_list(info["versions"].split(", ")))


def env_float(name: str, default: float) -> float:
    """A positive finite number from the environment variable ``name``; ``default`` when unset or malformed."""
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        return default
    return value if math.isfinite(value) and value > 0 else default


def memory_budget_bytes() -> int:
    """Memory a run may use: ``RNNLAB_MEMORY_BUDGET_GB`` if set, else half of what is free now.

    Free means the first accelerator's free memory when JAX runs on one (its ``memory_stats``), else the
    RAM available (``MemAvailable``). Trainings already running are counted separately, by
    :mod:`rnnlab.server.work.gate`, which admits a training only when its estimate fits in what they leave.
    """
    gigabytes = env_float("RNNLAB_MEMORY_BUDGET_GB", math.nan)
    if math.isfinite(gigabytes):
        return int(gigabytes * 2**30)
    device_free = device_free_bytes()
    if device_free is not None:
        return device_free // 2
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return int(info["MemAvailable"].split()[0]) * 1024 // 2
    except (OSError, KeyError, ValueError):
        return 4 * 2**30


def device_free_bytes() -> int | None:
    """Free memory of the first accelerator, or None on CPU (or when the device does not say)."""
    if jax.default_backend() == "cpu":
        return None
    try:
        stats = jax.devices()[0].memory_stats() or {}
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    except (KeyError, TypeError, ValueError, RuntimeError):
        return None
