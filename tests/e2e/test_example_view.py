"""Explore's unrolled example in a real browser: hovering one panel marks the same time step in all of them,
the marked-step slider moves the line in both charts, Play replays the kept snapshots, and New example draws
another sequence. The data checked is what Plotly holds in the page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rnnlab.figures.example_plots import TITLE
from tests.e2e.test_browser import (
    FIRST_CHART_TIMEOUT_MS,
    HELPERS,
    RENDER_TIMEOUT_MS,
    TRAIN_TIMEOUT_MS,
    Console,
    check_page,
    screenshot,
    wait_idle,
)

URL = "/explore?cell=lstm&task=copy&seq_len=20&batch=16&features=16&steps=60&chunk=10&run=1"
FIGURE = f"window.__rnnlab.figures({json.dumps(TITLE)})[0]"


def figure_value(page, expression: str):
    return page.evaluate(f"() => {{ const gd = {FIGURE}; return {expression}; }}")


def unrolled_box(page) -> dict:
    return figure_value(page, "(() => { const r = gd.getBoundingClientRect(); "
                              "return {x: r.x, y: r.y, width: r.width, height: r.height}; })()")


@pytest.mark.e2e
def test_hover_marks_one_step_in_every_panel_and_replay_and_new_example_work(page, artifacts: Path) -> None:
    console = Console(page)
    page.add_init_script(HELPERS)
    page.goto(URL)
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_text("Finished 60 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
    page.wait_for_function(f"() => !!{FIGURE}", timeout=FIRST_CHART_TIMEOUT_MS, polling=100)
    wait_idle(page)
    check_page(page, console, "Explore with the unrolled example")

    # every panel is drawn on the same x axis, so one hover covers them all
    axes = figure_value(page, "[...new Set(gd.data.map(t => t.xaxis || 'x'))]")
    assert axes == ["x"]
    page.locator(".js-plotly-plot").filter(has_text="unrolled in time").first.scroll_into_view_if_needed()
    box = unrolled_box(page)
    gd_layout = figure_value(page, "({l: gd._fullLayout._size.l, w: gd._fullLayout._size.w, "
                                   "t: gd._fullLayout._size.t, h: gd._fullLayout._size.h, "
                                   "x0: gd._fullLayout.xaxis.range[0], x1: gd._fullLayout.xaxis.range[1]})")
    target_t = 12
    px = box["x"] + gd_layout["l"] + gd_layout["w"] * (target_t - gd_layout["x0"]) / (gd_layout["x1"] - gd_layout["x0"])
    py = box["y"] + gd_layout["t"] + 0.85 * gd_layout["h"]  # over the gradient panel, at the bottom
    page.mouse.move(px, py)
    page.wait_for_function("() => document.querySelectorAll('.hoverlayer .legend text, .hoverlayer text').length > 0",
                           timeout=10_000, polling=100)
    hover = page.evaluate("() => [...document.querySelectorAll('.hoverlayer text')].map(t => t.textContent)")
    joined = " ".join(hover)
    for panel_trace in ("symbol", "p(right answer) at training step 60", "forget gate f", "||h_t||",
                        f"||dL/dh_{target_t}|| = "):  # the gradient's hover gives its true size at that step
        assert panel_trace in joined, (panel_trace, hover)  # one hover, every panel's value at that t
    spike = page.evaluate("() => document.querySelectorAll('.spikeline').length")
    assert spike > 0
    screenshot(page, artifacts / "screenshots", "40-example-hover")

    # the marked step: the line moves in every per-step chart
    slider = main.get_by_role("slider", name="Mark time step t")
    slider.focus()
    for _ in range(4):
        slider.press("ArrowRight")
        page.wait_for_timeout(150)
    wait_idle(page)
    marks_js = """() => [...document.querySelectorAll('.js-plotly-plot')]
        .filter(gd => !gd.closest('[data-stale="true"]'))
        .map(gd => (gd.layout.shapes || []).filter(s => s.type === 'line').map(s => s.x0)).filter(a => a.length)"""
    now = int(slider.input_value())
    assert now > 1
    expected = json.dumps(json.dumps([[now]] * 3, separators=(",", ":")))
    page.wait_for_function(f"() => JSON.stringify(({marks_js})()) === {expected}",
                           timeout=RENDER_TIMEOUT_MS, polling=100)  # per-step loss, unrolled view, keeper heatmap

    # Play replays the snapshots: the first frame shows the untrained model's values
    frames = figure_value(page, "gd._transitionData._frames.map(f => f.name)")
    assert frames[0] == "0" and frames[-1] == "60"
    untrained = figure_value(page, "Array.from(window.__rnnlab.trace(gd, 'p(right answer), untrained').y)")
    page.locator(".js-plotly-plot").filter(has_text="unrolled in time").first.get_by_text("Play").click()
    page.wait_for_function(
        f"() => {{ const gd = {FIGURE}; return gd._fullLayout.sliders[0].active === 0; }}", timeout=10_000, polling=50)
    step_values = ("(() => { const t = gd.data.find(t => t.name.startsWith('p(right answer) at training step')); "
                   "return window.__rnnlab.values(t.y); })()")
    try:  # the first frame drawn (on a busy machine Plotly's animation takes a while to get there)
        page.wait_for_function(
            f"() => {{ const gd = {FIGURE}; const a = {step_values}; const b = {json.dumps(untrained)}; "
            "return a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= 1e-6 + 1e-5 * Math.abs(b[i])); }",
            timeout=10_000, polling=50)
    except Exception:  # noqa: BLE001 - the assertion below says what differs
        pass
    first = figure_value(page, step_values)
    assert first == pytest.approx(untrained, rel=1e-5, abs=1e-6)
    page.wait_for_function(
        f"() => {{ const gd = {FIGURE}; return gd._fullLayout.sliders[0].active === {len(frames) - 1}; }}",
        timeout=len(frames) * 2000 + 5000, polling=100)

    # clicking a point of the per-step loss marks its step in every per-step chart
    per_step = "window.__rnnlab.figures('Loss at each time step of the sequence')[0]"
    page.locator(".js-plotly-plot").filter(has_text="Loss at each time step").first.scroll_into_view_if_needed()
    wait_idle(page)
    point = page.evaluate(f"""() => {{
        const gd = {per_step}; const fl = gd._fullLayout; const r = gd.getBoundingClientRect();
        const tr = gd._fullData[0]; const xs = window.__rnnlab.values(tr.x), ys = window.__rnnlab.values(tr.y);
        const i = xs.indexOf(15);
        return {{x: r.x + fl._size.l + fl.xaxis.d2p(xs[i]), y: r.y + fl._size.t + fl.yaxis.d2p(ys[i])}};
    }}""")
    page.mouse.move(point["x"], point["y"])
    page.wait_for_timeout(300)
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function(f"() => {{ const gd = {FIGURE}; return !!gd && (gd.layout.shapes || [])"
                           ".some(s => s.type === 'line' && s.x0 === 15); }", timeout=RENDER_TIMEOUT_MS, polling=100)
    wait_idle(page)
    assert main.get_by_role("slider", name="Mark time step t").input_value() == "15"
    screenshot(page, artifacts / "screenshots", "41-example-marked-by-click")

    # New example: another sequence
    before = figure_value(page, "window.__rnnlab.trace(gd, 'symbol').y")
    main.get_by_role("button", name="New example").click()
    page.wait_for_function(f"() => {{ const gd = {FIGURE}; return !!gd && "  # none while the rerun replaces it
                           f"JSON.stringify(window.__rnnlab.trace(gd, 'symbol').y) !== "
                           f"{json.dumps(json.dumps(before))}; }}", timeout=RENDER_TIMEOUT_MS, polling=100)
    wait_idle(page)
    check_page(page, console, "Explore after New example")


@pytest.mark.e2e
def test_pin_a_run_and_train_another_cell_on_the_same_axes(page, artifacts: Path) -> None:
    console = Console(page)
    page.add_init_script(HELPERS)
    page.goto("/explore?seq_len=20&batch=16&features=16&steps=50&chunk=10&run=1")
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_text("Finished 50 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
    wait_idle(page)
    main.get_by_role("button", name="Pin this run as A").click()
    wait_idle(page)
    sidebar = page.get_by_test_id("stSidebar")
    sidebar.get_by_test_id("stSelectbox").filter(has_text="Cell").locator("input").click()
    page.get_by_role("option", name="Simple RNN").click()
    wait_idle(page)
    main.get_by_role("button", name="Train").click()
    main.get_by_text("Finished 50 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)
    wait_idle(page)
    names = page.evaluate("() => window.__rnnlab.figures('A/B: evaluation loss')[0].data.map(t => t.name)")
    assert names == ["A: GRU, learnable carry", "B: Simple RNN, learnable carry"]
    for name in names:
        points = page.evaluate(f"() => window.__rnnlab.points('A/B: evaluation loss', {json.dumps(name)})")
        assert points == 6  # step 0 and five chunks of 10
    assert main.get_by_text("B's initial carry moved").count() == 1
    screenshot(page, artifacts / "screenshots", "42-ab")
    check_page(page, console, "Explore with A/B")


@pytest.mark.e2e
def test_share_with_the_class_link_and_qr_code_open_the_experiment_with_controls_hidden(
        page, browser, server: str, artifacts: Path) -> None:
    import io

    import numpy as np
    import zxingcpp
    from PIL import Image

    console = Console(page)
    page.goto("/explore?cell=lstm&seq_len=20&batch=16&features=16&steps=30&chunk=10")
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    main.get_by_role("button", name="Share with the class").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_text("Controls to hide from the class").wait_for()
    hide = dialog.get_by_role("combobox", name="Controls to hide from the class")
    for label in ("Cell", "Learning rate"):
        hide.click()
        page.get_by_role("option", name=label, exact=True).click()
        page.keyboard.press("Escape")  # close the list; the dialog stays
        dialog.locator(f".react-aria-ComboBox [data-tag][aria-label='{label}']").wait_for(timeout=RENDER_TIMEOUT_MS)
        wait_idle(page)
    code = dialog.get_by_test_id("stCode")
    hidden = re.compile(r"hide=cell(%2C|,)lr")
    try:  # the link is redrawn by the rerun that the last choice starts
        code.filter(has_text=hidden).wait_for(timeout=RENDER_TIMEOUT_MS)
    except Exception:  # noqa: BLE001 - said below with the link as it is
        pass
    link = code.inner_text().strip()
    assert hidden.search(link), link
    assert "run=1" in link and "cell=lstm" in link
    qr = Image.open(io.BytesIO(dialog.get_by_test_id("stImage").locator("img").first.screenshot())).convert("L")
    assert [r.text for r in zxingcpp.read_barcodes(np.asarray(qr))] == [link]  # what a phone's camera reads
    screenshot(page, artifacts / "screenshots", "43-share-with-the-class")
    check_page(page, console, "the share dialog")

    context = browser.new_context(viewport={"width": 390, "height": 844})  # a student's phone
    try:
        student = context.new_page()
        student.goto(link)
        student.get_by_text("Finished 30 steps.").wait_for(timeout=TRAIN_TIMEOUT_MS)  # autorun
        wait_idle(student)
        sidebar = student.get_by_test_id("stSidebar")
        labels = sidebar.get_by_test_id("stWidgetLabel").all_inner_texts()
        assert "Cell" not in labels and "Learning rate" not in labels and "Sequence length T" in labels
        student.screenshot(path=str(artifacts / "screenshots" / "44-student-phone.png"))
    finally:
        context.close()
