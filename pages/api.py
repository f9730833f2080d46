"""Old vs new initialize_carry: Flax <= 0.6 next to Flax >= 0.7 and NNX, live; what breaks; shapes; recipes."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rnnlab.flaxapi import breakages, columns, legacy, migrate, recipes, shapes
from rnnlab.model.cells import CARRY_INITS, CELLS
from rnnlab.sharing.urlstate import parse_dims
from rnnlab.text import error_text, escape_markdown
from ui.session import show_url_notes, url_state, write_url

write_url(url_state())  # the experiment stays in the URL on this page too, so a reload keeps it
st.title("Old vs new initialize_carry")
show_url_notes()
st.markdown(
    "Flax 0.7 (FLIP 3099) turned `initialize_carry` from a **static method** taking "
    "`(rng, batch_dims, size, init_fn)` into an **instance method** taking `(rng, input_shape)`: the cell now "
    "carries `features` and `carry_init` itself, and a `num_feature_axes` property tells `nn.RNN` where time is. "
    f"flax {legacy.LAST_OLD_VERSION} cannot be imported next to today's jax, so the old column runs a faithful "
    "reconstruction of its code (`rnnlab.flaxapi.legacy`) with the random numbers of jax "
    f"{legacy.OLD_JAX_VERSION} (`jax_threefry_partitionable=False`), so its values are the ones flax "
    f"{legacy.LAST_OLD_VERSION} gave; the other two run the installed Flax.")


@st.cache_data(show_spinner="Reproducing the errors on the installed Flax…")
def upgrade_breakages() -> list[breakages.Breakage]:
    return breakages.upgrade_breakages()


@st.cache_data(show_spinner="Running the learnable-carry recipes…")
def learnable_recipes() -> list[recipes.Recipe]:
    return recipes.learnable_recipes()


@st.cache_data(show_spinner=False, max_entries=16)
def checked(source: str) -> tuple[migrate.CheckResult, migrate.RewriteResult]:
    """The checker's findings and rewrite (parsed only, never run), once per distinct text."""
    return migrate.check(source), migrate.rewrite(source)


def leaf_table(column: columns.Column) -> pd.DataFrame:
    return pd.DataFrame([{"leaf": leaf.name, "shape": str(leaf.shape), "dtype": leaf.dtype,
                          "first values": ", ".join(f"{v:.4g}" for v in leaf.first_values)}
                         for leaf in column.leaves])


# ---- 1. side by side -------------------------------------------------------------------------------------
st.header("1. The same carry, three APIs")
cells = ["lstm", "optimized_lstm", "gru", "conv_lstm", "mgu", "simple"]
c1, c2, c3, c4 = st.columns(4)
cell = c1.selectbox("Cell", cells, format_func=lambda n: CELLS[n].cls.__name__, key="api_cell")
batch_text = c2.text_input("Batch dims", "4", key="api_batch", help="e.g. 4, or 2, 3, or empty for none")
in_features = int(c3.number_input("Input features", 1, 1024, 3, key="api_in"))
hidden = int(c4.number_input("Hidden features", 1, 1024, 5, key="api_hidden"))
c1, c2, c3, c4 = st.columns(4)
init_name = c1.selectbox("carry_init", list(CARRY_INITS), index=list(CARRY_INITS).index("normal"), key="api_init")
init_spec = CARRY_INITS[init_name]
init_value = float(c2.number_input(f"carry_init {init_spec.param or 'parameter'}", -100.0, 100.0,
                                   init_spec.default, format="%g", key=f"api_init_{init_name}",
                                   disabled=init_spec.param is None))
seed = int(c3.number_input("Seed", 0, 2**31 - 1, 0, key="api_seed"))
dtype = c4.selectbox("param_dtype", ["float32", "bfloat16"], key="api_dtype",
                     help="From 0.7 on the cell's param_dtype reaches carry_init; 0.6.x always made float32.")
spatial_text, kernel = "8, 8", 3
if CELLS[cell].spatial:
    c1, c2, _, _ = st.columns(4)
    spatial_text = c1.text_input("Spatial dims", "8, 8", key="api_spatial")
    kernel = int(c2.number_input("Kernel size", 1, 7, 3, key="api_kernel"))

batch_dims, batch_error = parse_dims(batch_text, "Batch dims")
spatial, spatial_error = parse_dims(spatial_text, "Spatial dims", max_dims=3, max_size=64)
if CELLS[cell].spatial and not spatial and not spatial_error:
    spatial_error = "Spatial dims: ConvLSTM needs at least one spatial axis, e.g. 8, 8."
problems = [m for m in (batch_error, spatial_error) if m]
if not problems:
    problems = list(filter(None, [columns.compare_size_error(cell, batch_dims, in_features, hidden,
                                                                 spatial if CELLS[cell].spatial else ())]))
comparison = None
if not problems:
    try:
        comparison = columns.compare(cell, batch_dims, in_features, hidden, init_name, init_value, seed,
                                          spatial=spatial, kernel_size=kernel, param_dtype=dtype)
        st.session_state.api_last_comparison = comparison
    except Exception as e:  # noqa: BLE001 - a message, never a traceback, for any input the widgets allow
        problems.append(f"The comparison could not be built for these settings ({error_text(e)}).")
for message in problems:
    st.error(message, icon=":material/block:")
if comparison is None and st.session_state.get("api_last_comparison") is not None:
    comparison = st.session_state.api_last_comparison
    st.caption(f"Showing the last comparison that worked: {comparison.flax_name} with input shape "
               f"{comparison.input_shape}, {comparison.carry_init}.")
if comparison is not None:
    for col, column in zip(st.columns(3), comparison.columns):
        with col:
            st.subheader(column.title)
            st.code(column.code, language="python", wrap_lines=True)
            if column.error:
                st.warning(column.error, icon=":material/error:")
            else:
                st.markdown(f"**{column.structure}**")
                st.dataframe(leaf_table(column), hide_index=True)
            for note in column.notes + column.caveats:
                st.caption(note)
    first, *rest = comparison.verdict.splitlines()
    (st.success if first.startswith("identical") else st.info)(
        "**Verdict:** " + first + ("\n\n" + "\n".join(f"- {line}" for line in rest) if rest else ""),
        icon=":material/compare_arrows:")

# ---- 2. what breaks --------------------------------------------------------------------------------------
st.header("2. What breaks if I upgrade")
st.caption("Each old snippet is run on the installed Flax, its error caught and shown, then the fix is run.")
for breakage in upgrade_breakages():
    with st.expander(("⚠️ " if breakage.silent else "") + breakage.title, expanded=breakage.silent):
        left, right = st.columns(2)
        left.markdown("**Old code**")
        left.code(breakage.old_code, language="python", wrap_lines=True)
        (left.warning if breakage.silent else left.error)(breakage.error)
        right.markdown("**Fix**")
        right.code(breakage.fix_code, language="python", wrap_lines=True)
        right.success(breakage.fix_result)
        if breakage.explanation:
            st.markdown(breakage.explanation)

# ---- 3. shapes -------------------------------------------------------------------------------------------
st.header("3. Shape explorer: what nn.RNN infers")
c1, c2, c3, c4 = st.columns(4)
shape_text = c1.text_input("Input shape", "2, 5, 3", key="shape_input",
                           help="the whole input, e.g. (batch, time, features) or (time, batch, features)")
shape_cell = c2.selectbox("Cell", cells, format_func=lambda n: CELLS[n].cls.__name__, key="shape_cell")
shape_features = int(c3.number_input("Features", 1, 256, 4, key="shape_features"))
time_major = c4.checkbox("time_major", key="shape_time_major")
shape, shape_error = parse_dims(shape_text, "Input shape", max_dims=6, max_size=1024, max_elements=1_000_000)
report = None
shape_error = shape_error or shapes.shape_size_error(shape, shape_features)
if shape_error:
    st.error(shape_error, icon=":material/block:")
else:
    try:
        report = shapes.explore_shapes(shape, time_major, shape_cell, shape_features)
    except Exception as e:  # noqa: BLE001 - a message, never a traceback
        st.error(f"nn.RNN could not be run on this shape ({error_text(e)}).", icon=":material/block:")
    else:
        if report.error is None:
            st.session_state.shape_last_report = report
if report is None and st.session_state.get("shape_last_report") is not None:
    report = st.session_state.shape_last_report
    st.caption(f"Showing the last shape that worked: {report.input_shape}, {CELLS[report.cell].cls.__name__}, "
               f"time_major={report.time_major}.")
if report is not None:
    st.code(report.code, language="python", wrap_lines=True)
    if report.error:
        st.error(report.error, icon=":material/block:")
    else:
        st.dataframe(pd.DataFrame([
            ("num_feature_axes", report.num_feature_axes), ("time axis", report.time_axis),
            ("time steps", report.time_steps), ("batch dims", report.batch_dims),
            ("input_shape passed to initialize_carry", report.carry_input_shape),
            ("input of one step", report.step_input_shape), ("carry shapes", report.carry_shapes),
            ("output shape", report.output_shape)], columns=["what nn.RNN inferred", "value"]).astype(str),
            hide_index=True)
    for note in report.notes:
        st.caption(note)
with st.expander("How does nn.RNN find the time axis?"):
    st.markdown(shapes.TIME_AXIS_EXPLAINED)

# ---- 4. recipes ------------------------------------------------------------------------------------------
st.header("4. Learnable initial carry: recipes that work today")
for recipe in learnable_recipes():
    with st.expander(recipe.title):
        st.markdown(recipe.summary)
        left, right = st.columns(2)
        left.markdown(f"**The code as it was published** ({recipe.seed_ref})")
        left.code(recipe.seed_code, language="python", wrap_lines=True)
        for defect in recipe.defects:
            left.markdown(f"- `{defect.code}`: {defect.problem}")
        for check in recipe.seed_checks:
            left.markdown(f"{'✅' if check.passed else '❌'} {check.name}: {check.detail}")
        right.markdown("**Fixed for current Flax**")
        right.code(recipe.fixed_code, language="python", wrap_lines=True)
        for check in recipe.checks:
            right.markdown(f"{'✅' if check.passed else '❌'} {check.name}: {check.detail}")

# ---- 5. migration checker --------------------------------------------------------------------------------
st.header("5. Migration checker")
st.caption("Paste code (or a whole document with code in it) written for flax <= 0.6. It is parsed, never "
           "executed or imported; each pitfall is explained with its line, and the mechanical ones are rewritten.")
if "mig_code" not in st.session_state:
    st.session_state.mig_code = migrate.EXAMPLE
# No type= here: Streamlit would answer a file of another type with an exception box; decode_upload refuses
# it with a message instead (and checks the size, binary content and encoding too).
upload = st.file_uploader("…or upload a .py / .txt / .md file", key="mig_upload",
                          help=f"A .py, .txt or .md file of at most {migrate.MAX_CHARS:,} characters and "
                               f"{migrate.MAX_LINES:,} lines of UTF-8 text.")
if upload is not None and st.session_state.get("mig_loaded") != upload.file_id:
    st.session_state.mig_loaded = upload.file_id
    text, st.session_state.mig_upload_error = migrate.decode_upload(upload.name, upload.getvalue())
    if text is not None:  # a refused file leaves the code that was there
        st.session_state.mig_code = text
if upload is not None and st.session_state.get("mig_upload_error"):
    st.error(escape_markdown(st.session_state.mig_upload_error), icon=":material/block:")
source = st.text_area("Code", key="mig_code", height=320)
result, rewritten = checked(source)
for problem in result.problems:
    st.warning(escape_markdown(problem.message), icon=":material/warning:")
if result.findings:
    st.markdown(f"**{len(result.findings)} finding(s)**")
    for f in result.findings:
        with st.container(border=True):
            st.markdown(f"**Line {f.line}: {migrate.RULES[f.rule]}** "
                        f"({'rewritten below' if f.fixable else 'needs a person'})")
            st.code(f.code, language="python", wrap_lines=True)
            st.markdown(f.message)
elif result.checked:
    st.success("No old-API or RNN pitfalls found.", icon=":material/check_circle:")
if rewritten.changed:
    st.subheader("Rewrite")
    st.code(rewritten.diff, language="diff")
    for change in rewritten.changes:
        st.caption(f"line {change.line}: {change.note}")
    st.download_button("Download the rewritten code", rewritten.source, "rewritten.py", "text/x-python",
                       icon=":material/download:", on_click="ignore")
    if rewritten.remaining:
        st.info(f"{len(rewritten.remaining)} finding(s) need a person: "
                + "; ".join(f"line {f.line}: {migrate.RULES[f.rule]}" for f in rewritten.remaining),
                icon=":material/person:")
