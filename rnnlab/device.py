"""What JAX runs on, in words for the home page."""

from __future__ import annotations

import jax


def describe_devices() -> dict[str, str]:
    """Backend ('cpu', 'gpu', 'tpu'), the devices JAX sees, and the versions in use."""
    import flax

    devices = jax.devices()
    kinds = sorted({d.device_kind for d in devices})
    return {"backend": jax.default_backend().upper(), "count": str(len(devices)), "kinds": ", ".join(kinds),
            "versions": f"jax {jax.__version__}, flax {flax.__version__}"}
