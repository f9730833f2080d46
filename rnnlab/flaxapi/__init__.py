"""The Old vs new API lesson: Flax <= 0.6's ``initialize_carry`` next to Flax >= 0.7 and NNX, run live.

- :mod:`.legacy`: a faithful reconstruction of flax 0.6's recurrent cells' ``initialize_carry``.
- :mod:`.columns`: the three columns (old Linen, new Linen, NNX) for one cell and carry, with a verdict.
- :mod:`.breakages`: what breaks or silently changes when old code runs on the installed Flax.
- :mod:`.shapes`: what ``nn.RNN`` infers from an input shape.
- :mod:`.recipes`: learnable-carry recipes, as people wrote them and fixed, checked live.
- :mod:`.trees`: what those modules share: a call whose error is the result, and reading pytrees.
- :mod:`.migrate`: the migration checker and codemod for pasted code (parsed, never run; imports no JAX).

The submodules are imported one by one, so that the checker stays light.
"""
