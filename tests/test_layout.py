"""Where code lives: pages/ holds page scripts only, rnnlab/ has no Streamlit, modules stay small, no module
uses another's private names, and nothing shown or documented points outside the repository."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"),
                  *(ROOT / "rnnlab").rglob("*.py")])


def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_pages_folder_holds_only_the_pages_app_py_registers():
    registered = set(re.findall(r'st\.Page\("pages/(\w+)\.py"', (ROOT / "app.py").read_text()))
    assert {p.stem for p in (ROOT / "pages").glob("*.py")} == registered
    for path in SOURCES + sorted((ROOT / "tests").rglob("*.py")):
        assert not any(m == "pages" or m.startswith("pages.") for m in imported_modules(path)), path


def test_rnnlab_never_imports_streamlit():
    driver = ROOT / "rnnlab" / "bench" / "app_latency.py"  # drives the app from outside with AppTest, as a test does
    for path in set((ROOT / "rnnlab").rglob("*.py")) - {driver}:
        assert not any(m.split(".")[0] == "streamlit" for m in imported_modules(path)), path


def test_modules_stay_small():
    long = {str(p.relative_to(ROOT)): n for p in SOURCES if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, long


def test_no_private_name_is_used_across_modules():
    """``from x import _name`` and ``module._name`` on an imported rnnlab or ui module are not allowed."""
    ours = ("rnnlab", "ui")
    for path in SOURCES:
        module_tree = tree(path)
        aliases = {}
        for node in ast.walk(module_tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ours:
                for alias in node.names:
                    assert not alias.name.startswith("_"), f"{path}: from {node.module} import {alias.name}"
                    aliases[alias.asname or alias.name] = node.module
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in ours:
                        aliases[alias.asname or alias.name.split(".")[0]] = alias.name
        for node in ast.walk(module_tree):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in aliases):
                raise AssertionError(f"{path}:{node.lineno}: {node.value.id}.{node.attr}")


def test_nothing_points_outside_the_repository_or_at_issue_numbers():
    texts = SOURCES + [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    for path in texts:
        text = path.read_text(encoding="utf-8")
        assert "shared/reference" not in text and "shared/seeds" not in text, path
        assert not re.search(r"\b[Ii]ssue \d+", text), path
