"""Every site in the corpus that breaks or silently changes on current Flax, checked by hand.

Each entry is (line in the snippet file, rule id of :data:`rnnlab.flaxapi.migrate.RULES`). The list was made by
reading each snippet line by line against the flax 0.6.11 and 0.12.8 sources, and confirmed by running: every
runnable snippet fails on the pinned Flax as it stands, and runs with flax 0.6.11's shapes once these sites are
fixed (``test_corpus.py``). ``np.bool`` in evojax_seq2seq is a numpy removal, not a Flax site; the snippet's
added lines restore it.
"""

SITES: dict[str, list[tuple[int, str]]] = {
    "d2l_gru": [
        (31, "static-initialize-carry"),
        (39, "cell-without-features"),
        (44, "cell-without-features"),
    ],
    "evojax_mlp_pi": [
        (38, "cell-without-features"),
    ],
    "evojax_seq2seq": [
        (59, "cell-without-features"),
        (75, "static-initialize-carry"),
        (112, "cell-without-features"),
    ],
    "evosax_lstm": [
        (130, "cell-without-features"),
        (151, "static-initialize-carry"),
    ],
    "flax_bidirectional": [
        (24, "cell-without-features"),
        (24, "rnn-positional-size"),
        (25, "cell-without-features"),
        (25, "rnn-positional-size"),
    ],
    "flax_bidirectional_merge_fn": [
        (24, "cell-without-features"),
        (24, "rnn-positional-size"),
        (25, "cell-without-features"),
        (25, "rnn-positional-size"),
    ],
    "flax_bidirectional_return_carry": [
        (24, "cell-without-features"),
        (24, "rnn-positional-size"),
        (25, "cell-without-features"),
        (25, "rnn-positional-size"),
        (36, "jax-tree-alias"),
        (40, "jax-tree-alias"),
    ],
    "flax_bidirectional_shared_cell": [
        (23, "cell-without-features"),
        (25, "rnn-positional-size"),
        (26, "rnn-positional-size"),
    ],
    "flax_cell_complex_gru": [
        (24, "static-initialize-carry"),
        (26, "cell-without-features"),
    ],
    "flax_cell_convlstm": [
        (24, "static-initialize-carry"),
    ],
    "flax_cell_gru": [
        (24, "static-initialize-carry"),
        (26, "cell-without-features"),
    ],
    "flax_cell_lstm": [
        (24, "static-initialize-carry"),
        (27, "cell-without-features"),
    ],
    "flax_cell_optimized_matches": [
        (26, "static-initialize-carry"),
        (29, "cell-without-features"),
        (36, "static-initialize-carry"),
        (39, "cell-without-features"),
    ],
    "flax_extra_lstm": [
        (42, "cell-without-features"),
        (55, "static-initialize-carry"),
    ],
    "flax_linen_intro_doc": [
        (20, "static-initialize-carry"),
        (27, "cell-without-features"),
    ],
    "flax_rnn_basic_forward": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
    ],
    "flax_rnn_equivalence_with_mask": [
        (26, "cell-without-features"),
        (26, "rnn-positional-size"),
        (32, "instance-initialize-carry"),
    ],
    "flax_rnn_multiple_batch_dims": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
    ],
    "flax_rnn_numerical_equivalence": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
        (29, "instance-initialize-carry"),
    ],
    "flax_rnn_reverse": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
        (32, "instance-initialize-carry"),
        (39, "jax-tree-alias"),
    ],
    "flax_rnn_reverse_keep_order": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
        (32, "instance-initialize-carry"),
        (39, "jax-tree-alias"),
    ],
    "flax_rnn_single_batch": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
        (32, "instance-initialize-carry"),
        (38, "jax-tree-alias"),
    ],
    "flax_rnn_single_batch_jax_scan": [
        (24, "cell-without-features"),
        (25, "instance-initialize-carry"),
        (36, "instance-initialize-carry"),
    ],
    "flax_rnn_single_batch_nn_scan": [
        (23, "cell-without-features"),
        (24, "cell-without-features"),
        (29, "instance-initialize-carry"),
        (36, "instance-initialize-carry"),
        (42, "jax-tree-alias"),
    ],
    "flax_rnn_spatial": [
        (27, "rnn-cell-size"),
    ],
    "flax_rnn_time_major": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
    ],
    "flax_rnn_unroll": [
        (23, "cell-without-features"),
        (23, "rnn-positional-size"),
    ],
    "flax_scan_docstring_0_3_6": [
        (19, "cell-without-features"),
        (25, "static-initialize-carry"),
    ],
    "flax_seq2seq_example": [
        (17, "custom-cell"),
        (36, "cell-without-features"),
        (88, "cell-without-features"),
        (88, "rnn-positional-size"),
        (89, "rnn-positional-size"),
    ],
    "flax_sst2_example": [
        (80, "cell-without-features"),
        (85, "static-initialize-carry"),
    ],
    "flax_transforms_scan": [
        (24, "cell-without-features"),
        (29, "static-initialize-carry"),
        (39, "cell-without-features"),
    ],
    "flax_transforms_scan_decorated": [
        (26, "cell-without-features"),
        (32, "static-initialize-carry"),
        (42, "cell-without-features"),
    ],
    "qdax_seq2seq": [],
}

NEEDS_A_PERSON: dict[str, str] = {
    "flax_seq2seq_example": "DecoderLSTMCell subclasses nn.RNNCellBase and needs num_feature_axes (custom-cell)",
    "flax_extra_lstm": "the scanned cell is built inside a combinator chain: no carry to read its features from",
}
"""Snippets whose rewrite leaves a finding for a person, and why (their rewrite is not expected to run)."""
