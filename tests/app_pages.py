"""The app's pages as app.py declares them (its ``st.Page`` calls), for tests that visit every page: one list, read
from the navigation itself, so that a page added there is visited by every such test."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app.py"


@dataclass(frozen=True)
class AppPage:
    """``script``: the page's file (app_pages/NAME.py); ``name``: NAME; ``url_path``: its address ("" for the default
    page); ``title``: its English title in the navigation."""

    script: str
    name: str
    url_path: str
    title: str


def app_pages() -> list[AppPage]:
    """Every page of app.py's navigation, in its order."""
    calls = [node for node in ast.walk(ast.parse(APP.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Page"]
    found = []
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        script = ast.literal_eval(call.args[0])
        keywords = {k.arg: k.value for k in call.keywords}
        title = keywords["title"]
        text = ast.literal_eval(title.args[0] if isinstance(title, ast.Call) else title)  # _("...") or "..."
        if "default" in keywords and ast.literal_eval(keywords["default"]):
            url_path = ""
        else:
            url_path = ast.literal_eval(keywords["url_path"]) if "url_path" in keywords else Path(script).stem
        found.append(AppPage(script, Path(script).stem, url_path, text))
    return found


PAGES = app_pages()
PAGE_NAMES = [p.name for p in PAGES]
