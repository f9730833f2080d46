"""The sidebar's experiment controls, generated from the settings table (``rnnlab.config.SETTINGS``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace

import streamlit as st

from rnnlab.config import CHOICES, CONTROL_RANGES, LIMITS, SETTING, SETTINGS, Config, describe_changes, with_cell
from rnnlab.i18n import _, join_sentences, language, t, using
from rnnlab.model.cells import CARRY_INITS
from rnnlab.model.network import carry_mode_label
from rnnlab.sharing.urlstate import UrlState


def _choice_help(setting) -> str:
    """The setting's help, followed by each choice's description when the registry has them (in the reader's
    language: the labels translate themselves, the descriptions are marked English)."""
    entries = setting.choices.items()
    described = [(getattr(v, "label", k), v if isinstance(v, str) else getattr(v, "description", None))
                 for k, v in entries]
    if all(d for _label, d in described) and setting.name != "carry_mode":
        # TRANSLATORS: one choice in a control's help: its name, then its description (a sentence).
        choices = join_sentences(*(t("{label}: {description}", label=label, description=_(str(d)))
                                   for label, d in described))
        # TRANSLATORS: a control's help (without a full stop), then a description of each of its choices.
        return t("{help}. {choices}", help=setting.help, choices=choices)
    return setting.help


def _shown_in_this_language(label: Callable[[str], str]) -> Callable[[str], str]:
    """``label`` of an option, always in this run's language: Streamlit (and its test harness) may call a widget's
    ``format_func`` again outside the script run, where the language is English."""
    lang = language()

    def shown(value: str) -> str:
        with using(lang):
            return label(value)

    return shown


def _widget(name: str, value, config: Config):
    """The control of setting ``name``, showing the session's value (or ``value`` the first time)."""
    setting = SETTING[name]
    key = f"w_{name}"
    # Re-assigned on every run: a widget of another page with the same key would otherwise drop it, and the
    # control would start from its default (the minimum) after a page switch.
    st.session_state[key] = st.session_state.get(key, value)
    label, help_text = setting.label, setting.help
    if setting.kind == "choice":
        choices = CHOICES[name]
        options = list(choices)
        if name == "carry_mode":
            return st.radio(label, options, key=key, horizontal=True, help=help_text,
                            format_func=_shown_in_this_language(carry_mode_label))
        return st.selectbox(label, options, key=key, help=_choice_help(setting),
                            format_func=_shown_in_this_language(lambda n: str(getattr(choices[n], "label", n))),
                            on_change=_cell_changed if name == "cell" else None)
    if setting.kind == "int":
        low, high = LIMITS[name]
        return int(st.number_input(label, min_value=low, max_value=high, step=1, key=key, help=help_text))
    lo, hi = CONTROL_RANGES[name]
    disabled = False
    if name == "carry_scale":
        spec = CARRY_INITS[config.carry_init]
        # TRANSLATORS: the label of the initialiser's parameter; {param} is its name in code (stddev, scale, value).
        label = t("carry_init {param}", param=spec.param) if spec.param else label
        disabled = spec.param is None
    return float(st.number_input(label, min_value=lo, max_value=hi, key=key, format="%g", step=setting.step,
                                 help=help_text, disabled=disabled))


def _cell_changed() -> None:
    """A newly chosen cell brings the settings it needs to run (``rnnlab.config.with_cell``), said in a note."""
    ss = st.session_state
    shown = {f.name: ss[f"w_{f.name}"] for f in fields(Config) if f"w_{f.name}" in ss}
    config, changes = with_cell(replace(ss.url_state.config, **shown), ss.w_cell)
    changes = {name: value for name, value in changes.items() if name not in ss.url_state.hidden}
    for name, value in changes.items():
        ss[f"w_{name}"] = value
    # Kept as ids and values, and described when shown: in the reader's language of that run.
    ss.cell_note = (config.cell, changes) if changes else None


def config_controls(state: UrlState) -> Config:
    """The experiment's controls in the sidebar (hidden ones keep their URL value); returns the new config."""
    current = state.config
    values: dict[str, object] = {}
    advanced = [s.name for s in SETTINGS if s.advanced and s.name not in state.hidden]
    with st.sidebar:
        st.subheader(_("Experiment"))
        for f in fields(Config):
            if f.name in state.hidden or SETTING[f.name].advanced:
                continue
            partial = replace(current, **values)
            if f.name == "carry_scale" and CARRY_INITS[partial.carry_init].param is None:
                continue
            values[f.name] = _widget(f.name, getattr(current, f.name), partial)
        if advanced:
            with st.expander(_("Advanced")):
                for name in advanced:
                    values[name] = _widget(name, getattr(current, name), replace(current, **values))
        note = st.session_state.pop("cell_note", None)
        if note:
            st.info(describe_changes(*note) if isinstance(note, tuple) else str(note), icon=":material/tune:")
    return replace(current, **values)


def explain(text: str) -> None:
    """A closed "What am I looking at?" box under a chart, with ``text`` (the app's own words) inside."""
    with st.expander(_("What am I looking at?")):
        st.markdown(text)
