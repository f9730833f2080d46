"""Old vs new initialize_carry: Flax <= 0.6 next to Flax >= 0.7 and NNX, live; what breaks; shapes; recipes."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from rnnlab.config import SETTING
from rnnlab.flaxapi import breakages, columns, legacy, migrate, recipes, shapes
from rnnlab.i18n import _, join_clauses, join_numbers, language, t, tn, using
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.sharing.urlstate import parse_dims
from rnnlab.text import error_text, escape_markdown
from ui.session import show_url_notes, url_state, write_url

write_url(url_state())  # the experiment stays in the URL on this page too, so a reload keeps it
st.title(_("Old vs new initialize_carry"))
show_url_notes()
st.markdown(t(
    "Flax 0.7 (FLIP 3099) turned `initialize_carry` from a **static method** taking "
    "`(rng, batch_dims, size, init_fn)` into an **instance method** taking `(rng, input_shape)`: the cell now "
    "carries `features` and `carry_init` itself, and a `num_feature_axes` property tells `nn.RNN` where time is. "
    "flax {old} cannot be imported next to today's jax, so the old column runs a faithful "
    "reconstruction of its code (`rnnlab.flaxapi.legacy`) with the random numbers of jax "
    "{jax} (`jax_threefry_partitionable=False`), so its values are the ones flax "
    "{old} gave; the other two run the installed Flax.", old=legacy.LAST_OLD_VERSION, jax=legacy.OLD_JAX_VERSION))


# Spinners are shown around the calls (show_spinner= is fixed at import); the results hold text, so the reader's
# language is part of each cache key.
@st.cache_data(show_spinner=False)
def upgrade_breakages(lang: str) -> list[breakages.Breakage]:
    with using(lang):
        return breakages.upgrade_breakages()


@st.cache_data(show_spinner=False)
def learnable_recipes(lang: str) -> list[recipes.Recipe]:
    with using(lang):
        return recipes.learnable_recipes()


@st.cache_data(show_spinner=False, max_entries=16)
def checked(source: str, lang: str) -> tuple[migrate.CheckResult, migrate.RewriteResult]:
    """The checker's findings and rewrite (parsed only, never run), once per distinct text and language."""
    with using(lang):
        return migrate.check(source), migrate.rewrite(source)


def leaf_table(column: columns.Column) -> pd.DataFrame:
    return pd.DataFrame([{_("leaf"): leaf.name, _("shape"): str(leaf.shape), "dtype": leaf.dtype,
                          _("first values"): join_numbers(leaf.first_values, ".4g")}
                         for leaf in column.leaves])


def check_line(passed: bool, name: str, detail: str) -> str:
    # TRANSLATORS: {mark} ✅ or ❌; {name} what a recipe check tests; {detail} the numbers behind it
    return t("{mark} {name}: {detail}", mark="✅" if passed else "❌", name=name, detail=detail)


# ---- 1. side by side -------------------------------------------------------------------------------------
st.header(_("1. The same carry, three APIs"))
cells = list(CELLS)
c1, c2, c3, c4 = st.columns(4)
cell = c1.selectbox(_("Cell"), cells, index=cells.index("lstm"), format_func=lambda n: CELLS[n].cls.__name__,
                    key="api_cell")
batch_label = _("Batch dims")
batch_text = c2.text_input(batch_label, "4", key="api_batch", help=_("e.g. 4, or 2, 3, or empty for none"))
in_features = int(c3.number_input(_("Input features"), 1, 1024, 3, key="api_in"))
hidden = int(c4.number_input(_("Hidden features"), 1, 1024, 5, key="api_hidden"))
c1, c2, c3, c4 = st.columns([3, 2, 2, 2])  # room for an initialiser's name (and its gloss) in the first
init_labels = {name: spec.word for name, spec in CARRY_INITS.items()}  # in this run's language, for format_func
init_name = c1.selectbox(SETTING["carry_init"].label, list(CARRY_INITS), index=list(CARRY_INITS).index("normal"),
                         key="api_init", format_func=init_labels.__getitem__)
init_spec = CARRY_INITS[init_name]
# TRANSLATORS: {param} is the initialiser's parameter (stddev, scale, value), kept as Flax names it
init_label = t("carry_init {param}", param=init_spec.param) if init_spec.param else _("carry_init parameter")
init_value = float(c2.number_input(init_label, -100.0, 100.0,
                                   init_spec.default, format="%g", key=f"api_init_{init_name}",
                                   disabled=init_spec.param is None))
seed = int(c3.number_input(_("Seed"), 0, 2**31 - 1, 0, key="api_seed"))
dtype = c4.selectbox("param_dtype", ["float32", "bfloat16"], key="api_dtype",
                     help=_("From 0.7 on the cell's param_dtype reaches carry_init; 0.6.x always made float32."))
spatial_text, kernel = "8, 8", 3
spatial_label = _("Spatial dims")
if CELLS[cell].spatial:
    c1, c2, _c3, _c4 = st.columns(4)
    spatial_text = c1.text_input(spatial_label, "8, 8", key="api_spatial")
    kernel = int(c2.number_input(_("Kernel size"), 1, 7, 3, key="api_kernel"))

batch_dims, batch_error = parse_dims(batch_text, batch_label)
spatial, spatial_error = parse_dims(spatial_text, spatial_label, max_dims=3, max_size=64)
if CELLS[cell].spatial and not spatial and not spatial_error:
    spatial_error = _("Spatial dims: ConvLSTM needs at least one spatial axis, e.g. 8, 8.")
problems = [m for m in (batch_error, spatial_error) if m]
if not problems:
    problems = list(filter(None, [columns.compare_size_error(cell, batch_dims, in_features, hidden,
                                                                 spatial if CELLS[cell].spatial else ())]))
comparison = None
if not problems:
    settings: dict[str, Any] = {
        "cell": cell, "batch_dims": batch_dims, "in_features": in_features, "hidden": hidden, "carry_init": init_name,
        "carry_param": init_value, "seed": seed, "spatial": spatial, "kernel_size": kernel, "param_dtype": dtype}
    try:
        comparison = columns.compare(**settings)
        # the settings, not the texts: the last comparison is built again in the reader's language
        st.session_state.api_last_comparison = settings
    except Exception as e:  # noqa: BLE001 - a message, never a traceback, for any input the widgets allow
        problems.append(t("The comparison could not be built for these settings ({error}).", error=error_text(e)))
for message in problems:
    st.error(message, icon=":material/block:")
if comparison is None and st.session_state.get("api_last_comparison") is not None:
    comparison = columns.compare(**st.session_state.api_last_comparison)
    # TRANSLATORS: {cell} a class name, {shape} an input shape, {init} the carry initializer (code)
    st.caption(t("Showing the last comparison that worked: {cell} with input shape {shape}, {init}.",
                 cell=comparison.flax_name, shape=comparison.input_shape, init=comparison.carry_init))
if comparison is not None:
    for col, column in zip(st.columns(3), comparison.columns):
        with col:
            st.subheader(column.title)
            st.code(column.code, language="python", wrap_lines=True)
            if column.error:
                st.warning(column.error, icon=":material/error:")
            else:
                st.markdown(f"**{column.structure}**")
                # a table that wraps its long cells: a data grid in a third of the page would be cut at its edge
                st.table(leaf_table(column), hide_index=True)
            for note in column.notes + column.caveats:
                st.caption(note)
    first, *rest = comparison.verdict.splitlines()
    (st.success if comparison.identical else st.info)(
        t("**Verdict:** {verdict}", verdict=first) + ("\n\n" + "\n".join(f"- {line}" for line in rest) if rest else ""),
        icon=":material/compare_arrows:")

# ---- 2. what breaks --------------------------------------------------------------------------------------
st.header(_("2. What breaks if I upgrade"))
st.caption(_("Each old snippet is run on the installed Flax, its error caught and shown, then the fix is run."))
with st.spinner(_("Reproducing the errors on the installed Flax…")):
    found_breakages = upgrade_breakages(language())
for breakage in found_breakages:
    with st.expander(("⚠️ " if breakage.silent else "") + breakage.title, expanded=breakage.silent):
        left, right = st.columns(2)
        left.markdown(_("**Old code**"))
        left.code(breakage.old_code, language="python", wrap_lines=True)
        (left.warning if breakage.silent else left.error)(breakage.error)
        right.markdown(_("**Fix**"))
        right.code(breakage.fix_code, language="python", wrap_lines=True)
        right.success(breakage.fix_result)
        if breakage.explanation:
            st.markdown(breakage.explanation)

# ---- 3. shapes -------------------------------------------------------------------------------------------
st.header(_("3. Shape explorer: what nn.RNN infers"))
c1, c2, c3, c4 = st.columns(4)
shape_label = _("Input shape")
shape_text = c1.text_input(shape_label, "2, 5, 3", key="shape_input",
                           help=_("the whole input, e.g. (batch, time, features) or (time, batch, features)"))
shape_cell = c2.selectbox(_("Cell"), cells, index=cells.index("lstm"), format_func=lambda n: CELLS[n].cls.__name__,
                          key="shape_cell")
shape_features = int(c3.number_input(_("Features"), 1, 256, 4, key="shape_features"))
time_major = c4.checkbox("time_major", key="shape_time_major")
shape, shape_error = parse_dims(shape_text, shape_label, max_dims=6, max_size=1024, max_elements=1_000_000)
report = None
shape_error = shape_error or shapes.shape_size_error(shape, shape_features)
if shape_error:
    st.error(shape_error, icon=":material/block:")
else:
    try:
        report = shapes.explore_shapes(shape, time_major, shape_cell, shape_features)
    except Exception as e:  # noqa: BLE001 - a message, never a traceback
        st.error(t("nn.RNN could not be run on this shape ({error}).", error=error_text(e)), icon=":material/block:")
    else:
        if report.error is None:
            # the settings, not the texts: the last report is built again in the reader's language
            st.session_state.shape_last_report = (shape, time_major, shape_cell, shape_features)
if report is None and st.session_state.get("shape_last_report") is not None:
    report = shapes.explore_shapes(*st.session_state.shape_last_report)
    # TRANSLATORS: {shape} an input shape, {cell} a class name, {time_major} True or False
    st.caption(t("Showing the last shape that worked: {shape}, {cell}, time_major={time_major}.",
                 shape=report.input_shape, cell=CELLS[report.cell].cls.__name__, time_major=repr(report.time_major)))
if report is not None:
    st.code(report.code, language="python", wrap_lines=True)
    if report.error:
        st.error(report.error, icon=":material/block:")
    else:
        st.dataframe(pd.DataFrame([
            ("num_feature_axes", report.num_feature_axes), (_("time axis"), report.time_axis),
            (_("time steps"), report.time_steps), (_("batch dims"), report.batch_dims),
            (_("input_shape passed to initialize_carry"), report.carry_input_shape),
            (_("input of one step"), report.step_input_shape), (_("carry shapes"), report.carry_shapes),
            (_("output shape"), report.output_shape)], columns=[_("what nn.RNN inferred"), _("value")]).astype(str),
            hide_index=True)
    for note in report.notes:
        st.caption(note)
with st.expander(_("How does nn.RNN find the time axis?")):
    st.markdown(_(shapes.TIME_AXIS_EXPLAINED))

# ---- 4. recipes ------------------------------------------------------------------------------------------
st.header(_("4. Learnable initial carry: recipes that work today"))
with st.spinner(_("Running the learnable-carry recipes…")):
    found_recipes = learnable_recipes(language())
for recipe in found_recipes:
    with st.expander(recipe.title):
        st.markdown(recipe.summary)
        left, right = st.columns(2)
        # TRANSLATORS: {source} where the code was published
        left.markdown(t("**The code as it was published** ({source})", source=recipe.seed_ref))
        left.code(recipe.seed_code, language="python", wrap_lines=True)
        for defect in recipe.defects:
            # TRANSLATORS: {code} a piece of the published code, {problem} what is wrong with it
            left.markdown(t("- `{code}`: {problem}", code=defect.code, problem=defect.problem))
        for check in recipe.seed_checks:
            left.markdown(check_line(check.passed, check.name, check.detail))
        right.markdown(_("**Fixed for current Flax**"))
        right.code(recipe.fixed_code, language="python", wrap_lines=True)
        for check in recipe.checks:
            right.markdown(check_line(check.passed, check.name, check.detail))

# ---- 5. migration checker --------------------------------------------------------------------------------
st.header(_("5. Migration checker"))
st.caption(_("Paste code (or a whole document with code in it) written for flax <= 0.6. It is parsed, never "
             "executed or imported; each pitfall is explained with its line, and the mechanical ones are rewritten."))
if "mig_code" not in st.session_state:
    st.session_state.mig_code = migrate.EXAMPLE
# No type= here: Streamlit would answer a file of another type with an exception box; decode_upload refuses
# it with a message instead (and checks the size, binary content and encoding too).
upload = st.file_uploader(_("…or upload a .py / .txt / .md file"), key="mig_upload",
                          # TRANSLATORS: {chars}, {lines}: the largest file the checker reads
                          help=t("A .py, .txt or .md file of at most {chars:,} characters and {lines:,} lines of "
                                 "UTF-8 text.", chars=migrate.MAX_CHARS, lines=migrate.MAX_LINES))
if upload is not None and st.session_state.get("mig_loaded") != upload.file_id:
    st.session_state.mig_loaded = upload.file_id
    text, st.session_state.mig_upload_error = migrate.decode_upload(upload.name, upload.getvalue())
    if text is not None:  # a refused file leaves the code that was there
        st.session_state.mig_code = text
if upload is not None and st.session_state.get("mig_upload_error"):
    st.error(escape_markdown(str(st.session_state.mig_upload_error)), icon=":material/block:")
source = st.text_area(_("Code"), key="mig_code", height=320)
result, rewritten = checked(source, language())


def rule_name(rule: str) -> str:
    """A checker rule's name in the reader's language (a kept message of the migration checker)."""
    return str(migrate.RULES[rule])


for problem in result.problems:
    st.warning(escape_markdown(str(problem.message)), icon=":material/warning:")
if result.findings:
    st.markdown(tn("**{n} finding**", "**{n} findings**", len(result.findings)))
    for f in result.findings:
        with st.container(border=True):
            if f.fixable:
                # TRANSLATORS: {line} a line number of the pasted code, {rule} what the checker found there
                st.markdown(t("**Line {line}: {rule}** (rewritten below)", line=f.line, rule=rule_name(f.rule)))
            else:
                # TRANSLATORS: {line} a line number of the pasted code, {rule} what the checker found there
                st.markdown(t("**Line {line}: {rule}** (needs a person)", line=f.line, rule=rule_name(f.rule)))
            st.code(f.code, language="python", wrap_lines=True)
            st.markdown(str(f.message))
elif result.checked:
    st.success(_("No old-API or RNN pitfalls found."), icon=":material/check_circle:")
if rewritten.changed:
    st.subheader(_("Rewrite"))
    st.code(rewritten.diff, language="diff")
    for change in rewritten.changes:
        # TRANSLATORS: {line} a line number, {note} what was rewritten there
        st.caption(t("line {line}: {note}", line=change.line, note=str(change.note)))
    st.download_button(_("Download the rewritten code"), rewritten.source, "rewritten.py", "text/x-python",
                       icon=":material/download:", on_click="ignore")
    if rewritten.remaining:
        items = join_clauses(t("line {line}: {note}", line=f.line, note=rule_name(f.rule))
                               for f in rewritten.remaining)
        # TRANSLATORS: {n} findings the rewrite could not fix; {items} each as: line N: what
        st.info(tn("{n} finding needs a person: {items}", "{n} findings need a person: {items}",
                   len(rewritten.remaining), items=items), icon=":material/person:")
