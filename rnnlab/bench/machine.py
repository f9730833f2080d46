"""The machine the benchmark ran on, and its measured float32 matmul peak."""

from __future__ import annotations

import importlib.metadata
import os
import platform

import jax
import jax.numpy as jnp

from rnnlab.bench.timing import Timing, measure

PACKAGES = ("jax", "jaxlib", "flax", "optax", "numpy", "streamlit", "torch")


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (else platform.processor())."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cores() -> int:
    """CPU cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def machine_info() -> dict[str, str]:
    """CPU model, cores, load, JAX backend and devices, Python and package versions, XLA flags."""
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    info = {
        "CPU": cpu_model(),
        "cores": str(cores()),
        "load average at start (1, 5, 15 min)": load,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "jax backend": jax.default_backend(),
        "jax devices": ", ".join(str(d) for d in jax.devices()),
    }
    info.update({name: version(name) for name in PACKAGES})
    info["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") or "(none)"
    return info


def matmul_peak(n: int = 2048, repeats: int = 5) -> tuple[float, Timing]:
    """GFLOP/s of one jitted float32 (n, n) @ (n, n) (2 n^3 FLOPs), median over ``repeats`` after warm-up."""
    a = jax.random.normal(jax.random.PRNGKey(0), (n, n), jnp.float32)
    b = jax.random.normal(jax.random.PRNGKey(1), (n, n), jnp.float32)
    dot = jax.jit(jnp.dot)
    timing = measure(lambda: dot(a, b), repeats, warmup=2)
    return 2 * n**3 / timing.median / 1e9, timing
