"""What the class's screens show, as pure functions of a class's view: the teacher's (projected at 1280x720: the
question, who has joined and answered, the spread of answers, then the run that settles it) and a student's (the
question and its choices, their own answer, then the result and its explanation). Texts are in the reader's
language; the pages draw what these return."""

from __future__ import annotations

from dataclasses import dataclass

from rnnlab.i18n import _, t, tn
from rnnlab.sharing.classes import ROUNDS, Ballot, ClassView, Question


@dataclass(frozen=True)
class Spread:
    """The answers' chart: the choices in the reader's language, a row of counts per round shown, their names, and
    the answer's index once revealed (None before)."""

    choices: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]
    rounds: tuple[str, ...]
    answer: int | None
    title: str


@dataclass(frozen=True)
class TeacherScreen:
    """The teacher's screen of the current question."""

    heading: str
    question: str
    joined: int
    answered: int
    first_answered: int | None  # in the second round: how many answered the first (None in the first)
    status: str
    spread: Spread
    revealed: bool
    can_second: bool  # a second round can be opened (the first is open, nothing revealed yet)
    answer: str  # the choice the run confirms, once revealed ('' before)
    lesson: str  # the explanation, once revealed
    ends: str
    position: int  # the current question's index
    titles: tuple[str, ...]  # every question's title, for moving between them


@dataclass(frozen=True)
class StudentScreen:
    """A student's screen of the current question."""

    heading: str
    question: str
    choices: tuple[str, ...]
    picked: int | None  # the student's choice in the round open now (None: not answered yet)
    answering: bool
    prompt: str
    note: str  # where their answer stands ('' when nothing to say)
    revealed: bool
    verdict: str  # once revealed: their prediction against the run
    answer: str
    lesson: str
    spread: Spread | None  # once revealed: how the class answered


STUDENT_EVERY_S, STUDENT_EVERY_MAX_S = 2.0, 10.0
LOOKS_PER_S = 15.0  # a class's students together ask the server about this often, however many they are


def student_interval(joined: int) -> float:
    """How often (seconds) a student's page asks whether the teacher changed what students see: every 2 s for a
    class of up to 30, then less often so that a class's pages together ask about :data:`LOOKS_PER_S` times a second,
    up to every 10 s (from 150 students on: a lecture hall of 300 sees the reveal within about 10 s)."""
    return min(STUDENT_EVERY_MAX_S, max(STUDENT_EVERY_S, joined / LOOKS_PER_S))


def round_names(count: int) -> tuple[str, ...]:
    """The names of the first ``count`` rounds, in the reader's language."""
    # TRANSLATORS: the two rounds of a class's answers: before and after the students discuss the question
    return (_("first answers"), _("after the discussion"))[:count]


def spread_of(question: Question, revealed: bool) -> Spread:
    """The chart of ``question``'s answers: every round that took answers, the answer marked when ``revealed``."""
    preset = question.lesson
    shown = question.counts[:question.round]
    # TRANSLATORS: the title of the chart of a class's answers
    title = _("The class's answers") if len(shown) == 1 else _("The class's answers, before and after the discussion")
    return Spread(tuple(_(c) for c in preset.choices), tuple(shown), round_names(len(shown)),
                  preset.answer if revealed else None, title)


def ends_text(expires_at: float, now: float) -> str:
    """When the class and its answers end, from ``now`` (seconds since the epoch)."""
    minutes = max(0, int((expires_at - now) // 60))
    if minutes >= 60:
        # TRANSLATORS: {hours} and {minutes}: the time left, e.g. "2 h 15 min"
        return t("This class and its answers are kept {hours} h {minutes} min more.", hours=minutes // 60,
                 minutes=minutes % 60)
    return tn("This class and its answers are kept {n} minute more.", "This class and its answers are kept {n} "
              "minutes more.", minutes)


def heading(view: ClassView) -> str:
    """"Question k of n: title" (only the title for a class of one question)."""
    title = _(view.question.lesson.title)
    if len(view.questions) == 1:
        return title
    # TRANSLATORS: {k} of {n} counts the class's questions; {title} is the current one's title
    return t("Question {k} of {n}: {title}", k=view.current + 1, n=len(view.questions), title=title)


def teacher_status(question: Question) -> str:
    """What happens now, in one sentence for the teacher."""
    if question.revealed:
        return _("Revealed: the run settles it. Reset to ask again, or move on.")
    if question.round > 1:
        return _("Second round: after the discussion, students answer again. Their first answers stay beside.")
    return _("Students are answering. Reveal when they have, or open a second round after a discussion.")


def teacher_screen(view: ClassView, now: float) -> TeacherScreen:
    """The teacher's screen of ``view``'s current question at time ``now``."""
    question = view.question
    preset = question.lesson
    return TeacherScreen(
        heading=heading(view), question=_(preset.question), joined=view.joined, answered=question.answered(),
        first_answered=question.answered(1) if question.round > 1 else None, status=teacher_status(question),
        spread=spread_of(question, question.revealed), revealed=question.revealed,
        can_second=not question.revealed and question.round < ROUNDS,
        answer=_(preset.choices[preset.answer]) if question.revealed else "",
        lesson=preset.lesson if question.revealed else "", ends=ends_text(view.expires_at, now),
        position=view.current, titles=tuple(_(q.lesson.title) for q in view.questions))


def student_prompt(question: Question, first: int | None, choices: tuple[str, ...]) -> str:
    if question.round > 1:
        if first is None:
            return _("Second round, after the discussion: pick the answer you think is right now.")
        # TRANSLATORS: {first} is the choice the student picked in the first round, in italics
        return t("Second round, after the discussion: pick the answer you think is right now (your first: *{first}*).",
                 first=choices[first])
    return _("Predict: pick one. You can change it until the teacher reveals the answer.")


def verdict(picked: int | None, answer: int, choices: tuple[str, ...]) -> str:
    """A student's last answer against the run's."""
    if picked is None:
        # TRANSLATORS: {answer} is the choice the run confirms, in italics
        return t("You did not answer. What the run shows: *{answer}*.", answer=choices[answer])
    if picked == answer:
        # TRANSLATORS: {guess} and {answer} are choices of the preset's question, in italics.
        return t("You predicted: *{guess}*, right. What the run shows: *{answer}*.", guess=choices[picked],
                 answer=choices[answer])
    # TRANSLATORS: {guess} and {answer} are choices of the preset's question, in italics.
    return t("You predicted: *{guess}*, not what happens. What the run shows: *{answer}*.", guess=choices[picked],
             answer=choices[answer])


def student_screen(view: ClassView, ballot: Ballot) -> StudentScreen:
    """A student's screen of ``view``'s current question, with their own answers (``ballot``)."""
    question, q = view.question, view.current
    preset = question.lesson
    choices = tuple(_(c) for c in preset.choices)
    picked = ballot.choice(q, question.round)
    last = next((c for r in range(question.round, 0, -1) if (c := ballot.choice(q, r)) is not None), None)
    answering = not question.revealed
    if answering and picked is not None:
        # TRANSLATORS: {choice} is the choice the student picked, in italics
        note = t("Your answer is in: *{choice}*. Change it by picking another.", choice=choices[picked])
    else:
        note = ""
    return StudentScreen(
        heading=heading(view), question=_(preset.question), choices=choices, picked=picked, answering=answering,
        prompt=student_prompt(question, ballot.choice(q, 1), choices) if answering else "", note=note,
        revealed=question.revealed, verdict=verdict(last, preset.answer, choices) if question.revealed else "",
        answer=choices[preset.answer], lesson=preset.lesson if question.revealed else "",
        spread=spread_of(question, True) if question.revealed else None)
