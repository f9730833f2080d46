"""Training: compiled programs and runs trained in chunks.

- :mod:`.program`: everything jitted for one static configuration, cached across runs and sessions.
- :mod:`.train`: a :class:`Run` trained one compiled call (the rest of a chunk, or the steps of it that fit in the time
  given) at a time into a :class:`History`.
- :mod:`.history`: what a run produced (:class:`History`), and what a caller sees after each call.
- :mod:`.divergence`: when a run stops by itself (a step went non-finite, the loss blew up), and why in words.
- :mod:`.calls`: one compiled call of a run's training as a pure function, with bytes forms for work that runs
  elsewhere.
- :mod:`.estimate`: how long a configuration will take, refined by measured calls.
- :mod:`.compiled`: JAX's persistent compilation cache, and how many programs a jitted function compiled.
"""

from rnnlab.training import estimate
from rnnlab.training.compiled import compile_count, enable_persistent_cache
from rnnlab.training.history import CallProgress, History
from rnnlab.training.program import Program, get_program, hyper_args
from rnnlab.training.train import CALL_SECONDS, Run, RunView

__all__ = ["CALL_SECONDS", "CallProgress", "History", "Program", "Run", "RunView", "compile_count",
           "enable_persistent_cache", "estimate", "get_program", "hyper_args"]
