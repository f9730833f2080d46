"""The true size's vocabulary, in one light module (no JAX): the floors below which float32 and float64 give 0,
the words for a size that is 0 by the arithmetic and for one that float32 alone gives as 0, and a size written
from its log10, however small. The probes (:mod:`rnnlab.probing`), the figures' true-size axis
(:mod:`rnnlab.figures.log10_scale`), the pages' words and the command line all read them here."""

from __future__ import annotations

import math

from rnnlab.i18n import N_

F32_TINY = 1.1754943508222875e-38  # float32's smallest normal number (np.finfo(np.float32).tiny)
F64_TINY = 2.2250738585072014e-308  # float64's (np.finfo(np.float64).tiny)
F32_LOG10_FLOOR = math.log10(F32_TINY)  # about -37.93: a float32 gradient below this comes out 0
F64_LOG10_FLOOR = math.log10(F64_TINY)  # about -307.65: a float64 one below this loses precision, then is 0

# A size that is 0 by the arithmetic (the log-scaled probe keeps any other size: its log10 is -inf), in tables, hovers
# and legends alike (translated where shown: _()).
EXACT_ZERO = N_("exactly 0")
# A value that float32 gives as 0 (a loss, a float32 backward pass), said so where shown (translated: _()).
FLOAT32_ZERO = N_("0 in float32")


def format_log10(log10: float, digits: int = 3) -> str:
    """A size from its log10, however small: '4.700e-54', or :data:`EXACT_ZERO` for -inf (an exact 0)."""
    if math.isinf(log10) and log10 < 0:
        return EXACT_ZERO
    if not math.isfinite(log10):
        return str(log10)
    exponent = math.floor(log10)
    mantissa = 10 ** (log10 - exponent)
    if round(mantissa, digits) >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.{digits}f}e{exponent:+03d}"
