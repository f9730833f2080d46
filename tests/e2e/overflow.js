// Text that the page cuts off or lets overflow, measured in the browser: returns a list of
// {where, text, need, have} (empty when everything fits). Read by tests/e2e/test_overflow.py.
() => {
  const found = [];
  const app = document.querySelector("[data-testid='stApp']") || document.body;
  const shown = (el) => {
    const box = el.getBoundingClientRect();
    // a box a few pixels wide is a screen reader's text (Skip to main content), not one a reader sees
    // and a box outside the window is a collapsed sidebar's (a phone's), shown only when it is opened
    return box.width > 3 && box.height > 3 && box.right > 0 && box.left < window.innerWidth &&
      el.clientWidth !== 0 && getComputedStyle(el).visibility !== "hidden";
  };
  const where = (el) => {
    const owner = el.closest("[data-testid]:not([data-testid^='stMarkdown']):not([data-testid='stTooltipHoverTarget'])");
    return owner ? owner.getAttribute("data-testid") : el.tagName.toLowerCase();
  };
  const say = (el, why, need, have, text) =>
    found.push({where: where(el), why, text: (text ?? el.innerText ?? "").trim().slice(0, 120), need, have});
  const ownText = (el) => [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim());
  const clips = (style) => ["hidden", "clip"].includes(style.overflowX);

  // 1. Text cut to fit its box: an ellipsis, or a box that hides what its single line does not hold.
  for (const el of app.querySelectorAll("*")) {
    if (el.closest("[data-testid='stDataFrame'], .js-plotly-plot, svg, canvas, [data-testid='stCode'], pre")) continue;
    const style = getComputedStyle(el);
    const ellipsis = style.textOverflow === "ellipsis";
    const oneLine = style.whiteSpace === "nowrap" || style.whiteSpace === "pre";
    if (!(ellipsis || (clips(style) && oneLine && ownText(el)))) continue;
    if (!el.innerText || !el.innerText.trim() || !shown(el)) continue;
    if (el.scrollWidth > el.clientWidth + 1) say(el, "cut", el.scrollWidth, el.clientWidth);
  }

  // A box that scrolls sideways to show what does not fit (a multiselect's chips in one row).
  for (const el of app.querySelectorAll("*")) {
    if (el.closest("[data-testid='stDataFrame'], .js-plotly-plot, [data-testid='stCode'], pre")) continue;
    const testid = el.getAttribute("data-testid") || "";
    if (["stMain", "stSidebar", "stSidebarContent", "stAppViewContainer", "stApp"].includes(testid)) continue;
    if (!["auto", "scroll"].includes(getComputedStyle(el).overflowX) || !shown(el)) continue;
    if (el.scrollWidth > el.clientWidth + 1) say(el, "scrolls sideways", el.scrollWidth, el.clientWidth);
  }

  // A select's or a text box's value (or its placeholder) wider than the box shows it.
  const measure = document.createElement("canvas").getContext("2d");
  for (const el of app.querySelectorAll("input:not([type]), input[type='text'], input[type='number']")) {
    const text = el.value || el.placeholder;
    if (!text || !shown(el)) continue;
    const style = getComputedStyle(el);
    measure.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    const have = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const need = Math.ceil(measure.measureText(text).width);
    if (need > have + 1) say(el, el.value ? "value cut" : "placeholder cut", need, Math.round(have), text);
  }

  // 2. Content wider than the page or than its column (a line that runs out of its place).
  const main = document.querySelector("[data-testid='stMain']");
  for (const box of [main, document.querySelector("[data-testid='stSidebarContent']")]) {
    if (box && shown(box) && box.scrollWidth > box.clientWidth + 1) {
      const wide = [...box.querySelectorAll("*")].filter((el) => shown(el) &&
        el.getBoundingClientRect().right > box.getBoundingClientRect().right + 1 &&
        !el.closest("[data-testid='stDataFrame'] .dvn-scroller, [data-testid='stCode'], pre"));
      const el = wide.length ? wide[wide.length - 1] : box;
      say(el, "wider than the page", box.scrollWidth, box.clientWidth);
    }
  }
  for (const column of app.querySelectorAll("[data-testid='stColumn']")) {
    if (!shown(column)) continue;
    const right = column.getBoundingClientRect().right;
    for (const el of column.querySelectorAll("[data-testid='stDataFrame'] .dvn-scroller")) {
      if (shown(el) && el.scrollWidth > el.clientWidth + 1) say(el, "table wider than its column", el.scrollWidth, el.clientWidth);
    }
    for (const el of column.querySelectorAll("p, span, label, li, td, th, h1, h2, h3, h4, button")) {
      if (!shown(el) || el.closest("[data-testid='stDataFrame'], [data-testid='stCode'], pre, .js-plotly-plot")) continue;
      const box = el.getBoundingClientRect();
      if (ownText(el) && box.right > right + 1) say(el, "runs out of its column", Math.round(box.right), Math.round(right));
    }
  }

  // 3. Table cells: an HTML table's cell that hides text; a data grid's cell or header wider than a column may
  //    grow (Streamlit sizes a column to its content up to 500 px and cuts the rest with an ellipsis).
  for (const el of app.querySelectorAll("[data-testid='stTable'] td, [data-testid='stTable'] th")) {
    if (shown(el) && el.scrollWidth > el.clientWidth + 1) say(el, "cell cut", el.scrollWidth, el.clientWidth);
  }
  const canvas = document.createElement("canvas").getContext("2d");
  for (const grid of app.querySelectorAll("[data-testid='stDataFrame']")) {
    const editor = grid.querySelector(".stDataFrameGlideDataEditor");
    if (!editor) continue;
    const style = getComputedStyle(editor);
    const family = style.getPropertyValue("--gdg-font-family") || style.fontFamily;
    for (const cell of grid.querySelectorAll("th[role='columnheader'], td[role='gridcell']")) {
      const header = cell.tagName === "TH";
      canvas.font = `${header ? "600 " : ""}${style.getPropertyValue(header ? "--gdg-header-font-style" : "--gdg-base-font-style") || "14px"} ${family}`;
      const need = Math.ceil(canvas.measureText(cell.textContent).width) + 2 * 8 + (header ? 20 : 0);
      if (need > 500) say(grid, header ? "header cut" : "cell cut", need, 500, cell.textContent);
    }
  }
  // 4. A data grid whose first columns (what a row is and what it says: Compare's configuration, verdict, share of
  //    the baseline and loss) run off its box on a screen wide enough to show them (a laptop's, a projector's); the
  //    columns after them may be reached by scrolling sideways. Each column as wide as its widest header or cell.
  if (window.innerWidth >= 1000) {
    for (const grid of app.querySelectorAll("[data-testid='stDataFrame']")) {
      const scroller = grid.querySelector(".dvn-scroller"), editor = grid.querySelector(".stDataFrameGlideDataEditor");
      if (!scroller || !editor || !shown(scroller)) continue;
      const style = getComputedStyle(editor);
      const family = style.getPropertyValue("--gdg-font-family") || style.fontFamily;
      const widths = new Map();
      for (const cell of grid.querySelectorAll("th[role='columnheader'], td[role='gridcell']")) {
        const header = cell.tagName === "TH";
        canvas.font = `${header ? "600 " : ""}${style.getPropertyValue(header ? "--gdg-header-font-style" : "--gdg-base-font-style") || "14px"} ${family}`;
        const column = cell.getAttribute("aria-colindex");
        const need = Math.ceil(canvas.measureText(cell.textContent).width) + 2 * 8 + (header ? 20 : 0);
        widths.set(column, Math.max(widths.get(column) || 0, need));
      }
      const first = [...widths.keys()].sort((a, b) => a - b).slice(0, 4).reduce((sum, c) => sum + widths.get(c), 0);
      if (first > scroller.clientWidth + 1) say(grid, "first columns off the table's box", first, scroller.clientWidth);
    }
  }

  // 5. A chart's words over each other: an axis title over the legend, the title wider than the chart.
  const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 &&
    Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
  for (const plot of app.querySelectorAll(".js-plotly-plot")) {
    if (!shown(plot)) continue;
    const legend = plot.querySelector(".legend");
    const frame = plot.getBoundingClientRect();
    for (const title of plot.querySelectorAll(".g-xtitle text, .g-ytitle text, .g-x2title text, .g-y2title text")) {
      const box = title.getBoundingClientRect();
      if (legend && box.width > 0 && overlap(box, legend.getBoundingClientRect())) {
        say(title, "axis title over the legend", Math.round(box.bottom), Math.round(legend.getBoundingClientRect().top), title.textContent);
      }
    }
    const heading = plot.querySelector(".gtitle"), area = plot.querySelector(".nsewdrag");
    for (const title of plot.querySelectorAll(".g-ytitle text")) {
      const box = title.getBoundingClientRect(), plotArea = area && area.getBoundingClientRect();
      if (box.height > 0 && ((heading && overlap(box, heading.getBoundingClientRect())) ||
                             (plotArea && box.height > plotArea.height + 40))) {
        say(title, "axis title longer than its axis", Math.round(box.height), Math.round(plotArea ? plotArea.height : 0), title.textContent);
      }
    }
    for (const title of plot.querySelectorAll(".gtitle")) {
      const box = title.getBoundingClientRect();
      if (box.width > 0 && (box.right > frame.right + 1 || box.left < frame.left - 1)) {
        say(title, "chart title wider than the chart", Math.round(box.width), Math.round(frame.width), title.textContent);
      }
    }
  }
  return found;
}
