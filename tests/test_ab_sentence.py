"""The A/B sentence and section 2's movement sentence quote one evaluation, and name its step."""

from __future__ import annotations

import re

from rnnlab.config import Config
from rnnlab.figures import ab, run_views
from rnnlab.probing import analysis
from rnnlab.training.train import Run

SMALL = Config(cell="gru", task="adding", seq_len=12, batch=8, features=8, steps=40, chunk=10, carry_mode="learnable")


def stopped_in_a_chunk() -> Run:
    """A run trained one chunk and then part of the next, as a Stop in the middle of a chunk leaves it."""
    run = Run(SMALL)
    run.run_call()
    while run.step == 10:
        run.run_call(max_seconds=1e-9)
    assert run.step > run.history.evaluated_step == 10
    return run


def test_the_sentence_quotes_the_loss_and_movement_of_the_step_it_names():
    a_run, b_run = Run(SMALL), stopped_in_a_chunk()
    a_run.run_call()
    a_run.run_call()
    a = ab.side(a_run.config, a_run.history, "A")
    b = ab.side(b_run.config, b_run.history, "B")
    text = ab.describe(a, b)
    b_eval = b_run.history.chunks[-1]
    assert b_eval["step"] == 10 and b.step == 10 and b.trained == b_run.step
    moved = analysis.carry_movement(b_run.history)["h"]["distance"]
    assert (f"after 10 steps (its latest evaluation; it has trained {b_run.step} steps, and evaluates at the end "
            f"of each chunk) the evaluation loss is {b_eval['eval_loss']:.3g} and its initial carry moved "
            f"{moved:.2g}") in text
    assert f"after 20 steps the evaluation loss is {a_run.history.chunks[-1]['eval_loss']:.3g}" in text
    assert "(its latest" not in text.split("**B**")[0]  # A evaluated where it stopped: nothing to add


def test_section_two_says_the_step_its_movement_is_of():
    run = stopped_in_a_chunk()
    view = run_views.carry_view(run.view().history)
    assert re.match(r"\*\*By step 10:\*\*", view.movement)
