"""What a float32 backward pass itself gives, against a float32 backward pass written here: the Gradient flow page's
count of float32 zeros is the number of steps whose gradient plain ``jax.grad`` gives as exactly 0 (up to a step at
the boundary, where one component is left at float32's floor and each summation order keeps or loses it)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rnnlab import true_sizes
from rnnlab.figures import gradient_views, size_words
from rnnlab.i18n import using
from rnnlab.probing import probes
from rnnlab.sharing.presets import PRESETS_BY_KEY
from rnnlab.training.train import Run


def float32_grads(run: Run) -> np.ndarray:
    """(steps + 1, batch, features): dL/dh_t of the run's simple cell on its probe batch, plain float32 ``jax.grad``
    of the loss with respect to a perturbation added to the carry after each step (t = 0: the initial carry)."""
    x, y, _ = probes.probe_batch(run.program, run.root)
    p = run.params["params"]
    w_in, b_in, w_h = p["SimpleCell_0"]["i"]["kernel"], p["SimpleCell_0"]["i"]["bias"], p["SimpleCell_0"]["h"]["kernel"]
    k, b = p["readout"]["kernel"], p["readout"]["bias"]
    xs = jnp.swapaxes(x, 0, 1)

    def loss(eps):
        def step(h, inputs):
            x_t, e = inputs
            h = jnp.tanh(x_t @ w_in + b_in + h @ w_h) + e
            return h, h

        h0 = jnp.broadcast_to(p["h0"], eps.shape[1:]) + eps[0]
        _, hs = jax.lax.scan(step, h0, (xs, eps[1:]))
        return run.program.task.loss(jnp.swapaxes(hs @ k + b, 0, 1), y)

    eps = jnp.zeros((xs.shape[0] + 1, x.shape[0], w_h.shape[0]), jnp.float32)
    want = run.program.loss_fn(run.params, run.program.zero_carry(), x, y, probes.probe_batch(run.program, run.root)[2],
                               run.scale)[0]
    np.testing.assert_allclose(float(loss(eps)), float(want), rtol=1e-5)  # the same model and loss
    return np.asarray(jax.jit(jax.grad(loss))(eps))


def test_the_pages_float32_count_is_what_a_float32_backward_pass_gives():
    preset = PRESETS_BY_KEY["simple_3000_steps"]
    run = Run(preset.config)
    grads = probes.run_grad_through_time(run)
    g = float32_grads(run).reshape(len(grads), -1)
    zero = ~g.any(axis=1)
    below = int((grads["log10"] < true_sizes.F32_LOG10_FLOOR).sum())
    assert zero.sum() > below > 0  # float32 loses single components before the norm falls below its floor
    assert np.isfinite(grads["log10"]).all()  # every one of them has a true size
    count = gradient_views.float32_zeros(grads)
    page = grads["float32"].to_numpy()
    # The same steps but at the boundary: the two float32 passes sum in their own order, so where one component
    # is left at float32's floor, one may keep it (about 1e-38) where the other gives 0.
    differ = (page == 0) != zero
    near_floor = 10 * float(np.finfo(np.float32).tiny)
    mine = np.linalg.norm(g.astype(np.float64), axis=1)
    assert differ.sum() <= 2 and (np.maximum(page, mine)[differ] < near_floor).all()
    conn = probes.run_connectivity(run)
    with using("en"):
        captions = " ".join(gradient_views.probe_view(grads, conn).captions)
    assert f"{below} values of ||dL/dh_t|| are below float32's smallest normal number" in captions
    assert f"A float32 backward pass on the same batch gives exactly 0 for {count} values of ||dL/dh_t||" in captions


def test_no_float32_sentence_where_the_float32_pass_is_not_run():
    grads = probes.pd.DataFrame({"step": [0, 0], "t": [0, 1], "leaf": ["h", "h"], "grad_norm": [1e-3, 1e-2],
                                 "log10": [-3.0, -2.0], "zero_cause": ["", ""], "zero_at": [-1, -1],
                                 "float32": [np.nan, np.nan]})
    assert gradient_views.float32_zeros(grads) == 0 and gradient_views.describe_float32_zeros(grads, "q") == ""
    assert size_words.describe_below_float32(grads["log10"], "q") == ""


def test_the_saturation_thresholds_a_zero_sentence_names_are_where_the_probes_derivatives_become_0():
    """"units so saturated that their derivative is 0 in float32 even computed without cancellation (pre-activation
    beyond about ±44 for tanh, ±87 for a sigmoid)": the probe's float32 slopes are 0 just past those numbers and not
    just before, while plain ``jax.grad`` (which cancels) is already 0 well before them."""
    import re

    from rnnlab.model.probe_step import sigmoid_slope, tanh_slope

    with using("en"):
        sentence = size_words.describe_zero("saturated", 3)
    tanh_at, sigmoid_at = (float(n) for n in re.search(r"±(\d+) for tanh, ±(\d+) for a sigmoid", sentence).groups())
    for slope, at, naive in [(tanh_slope, tanh_at, jax.grad(jnp.tanh)), (sigmoid_slope, sigmoid_at,
                                                                          jax.grad(jax.nn.sigmoid))]:
        for sign in (1.0, -1.0):
            before, past = jnp.float32(sign * (at - 0.5)), jnp.float32(sign * (at + 0.5))
            assert float(jax.jit(slope)(before)) > 0 and float(jax.jit(slope)(past)) == 0.0
        assert float(naive(jnp.float32(0.5 * at))) == 0.0 < float(jax.jit(slope)(jnp.float32(0.5 * at)))
