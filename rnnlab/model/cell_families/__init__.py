"""The recurrent cells, one file per family; :data:`rnnlab.model.cells.CELLS` collects them.

A family's file holds, side by side, everything its cells need: their specs (``SPECS``, each a
:class:`~rnnlab.model.cell_spec.CellSpec`), their fused step and its hand-written derivative
(:class:`~rnnlab.model.fused.FusedCell`), their gates (read from what the fused step saves), and their step as the
log-scaled probe differentiates it (:class:`~rnnlab.model.probe_step.ProbeCell`). A new cell is a new file here
(and its words in the catalogs); every table, page and test finds it through ``CELLS``.

- :mod:`.gru`: the GRU.
- :mod:`.lstm`: the LSTM, the optimized LSTM and the ConvLSTM.
- :mod:`.mgu`: the minimal gated unit.
- :mod:`.simple`: the simple RNN.
"""
