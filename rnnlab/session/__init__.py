"""What a page session decides, without Streamlit: the pages carry out what these modules return.

- :mod:`.explore_actions`: the Explore page's buttons (Train, Stop, Step, Reset, Load parameters, a class
  link's autorun, "Start anyway?") as a pure function :func:`decide` of (state, event) -> (state, effects).
- :mod:`.class_screens`: what a class's screens show (the teacher's and a student's) of a class's view.
"""

from rnnlab.session.explore_actions import (
    ActionState,
    Asked,
    Compiled,
    Cost,
    Deferred,
    Effect,
    Facts,
    Loaded,
    PendingSeen,
    Question,
    RunFacts,
    RunFailed,
    RunStarted,
    StepBegun,
    TrainingEnded,
    decide,
)

__all__ = ["ActionState", "Asked", "Compiled", "Cost", "Deferred", "Effect", "Facts", "Loaded", "PendingSeen",
           "Question", "RunFacts", "RunFailed", "RunStarted", "StepBegun", "TrainingEnded", "decide"]
