"""The sidebar's experiment controls, generated from the settings table (``rnnlab.config.SETTINGS``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields, replace

import streamlit as st

from rnnlab.config import CHOICES, CONTROL_RANGES, LIMITS, SETTING, SETTINGS, Config, describe_changes, with_cell
from rnnlab.i18n import _, join_sentences, language, t, using
from rnnlab.sharing.urlstate import UrlState


def _choice_help(setting) -> str:
    """The setting's help, followed by each choice's description when the registry has them (in the reader's
    language: the labels translate themselves, the descriptions are marked English)."""
    entries = setting.choices.items()
    described = [(getattr(v, "label", k), v if isinstance(v, str) else getattr(v, "description", None))
                 for k, v in entries]
    if all(d for _label, d in described) and setting.choices_in_help:
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
        shown = _shown_in_this_language(setting.shown_value)
        if setting.control == "radio":
            return st.radio(label, options, key=key, horizontal=True, help=help_text, format_func=shown)
        return st.selectbox(label, options, key=key, help=_choice_help(setting), format_func=shown,
                            on_change=_cell_changed if setting.brings_settings else None)
    if setting.kind == "int":
        low, high = LIMITS[name]
        return int(st.number_input(label, min_value=low, max_value=high, step=1, key=key, help=help_text))
    lo, hi = CONTROL_RANGES[name]
    disabled = False
    if setting.parameter_of is not None:
        param = parameter_name(setting, config)
        # TRANSLATORS: the label of the initialiser's parameter; {param} is its name in code (stddev, scale, value).
        label = t("carry_init {param}", param=param) if param else label
        disabled = param is None
    return float(st.number_input(label, min_value=lo, max_value=hi, key=key, format="%g", step=setting.step,
                                 help=help_text, disabled=disabled))


def parameter_name(setting, config: Config) -> str | None:
    """The name of the parameter a ``parameter_of`` setting is, for the entry chosen in ``config`` (None: the
    entry takes none)."""
    chosen = getattr(config, str(setting.parameter_of))
    return getattr(CHOICES[str(setting.parameter_of)][chosen], "param", None)


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
            if SETTING[f.name].parameter_of is not None and parameter_name(SETTING[f.name], partial) is None:
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
