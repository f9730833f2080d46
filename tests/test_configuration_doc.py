"""docs/configuration.md and the code agree: every RNNLAB_* variable the app reads is documented there, and every
one documented there is read (by the app, or by the tests for the test settings)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "configuration.md"
NAME = re.compile(r"RNNLAB_[A-Z0-9_]+")
READS = ("os.environ", "getenv", "env_float", "env_int")  # a module holding one of these reads the environment


def python_files(*places: str) -> list[Path]:
    files = []
    for place in places:
        path = ROOT / place
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def read_names(*places: str) -> dict[str, Path]:
    """RNNLAB_* names that modules reading the environment hold as whole strings (a constant such as
    ``ENV_LIMIT = "RNNLAB_MAX_TRAININGS"``, or ``os.environ.get("RNNLAB_X")``): name -> the first such module."""
    names: dict[str, Path] = {}
    for path in python_files(*places):
        text = path.read_text(encoding="utf-8")
        if not any(read in text for read in READS):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                names.setdefault(node.value, path.relative_to(ROOT))
    return names


def documented() -> set[str]:
    """The names docs/configuration.md gives an entry: a list item that starts with the name in backticks."""
    return set(re.findall(r"^- `(RNNLAB_[A-Z0-9_]+)(?:=[^`]*)?`", DOC.read_text(encoding="utf-8"), re.MULTILINE))


def test_the_reader_finds_the_variables_whatever_way_a_module_reads_them():
    found = read_names("rnnlab", "ui", "app_pages", "app.py")
    assert {"RNNLAB_MAX_TRAININGS", "RNNLAB_MAX_PROGRAMS", "RNNLAB_MEMORY_BUDGET_GB", "RNNLAB_JAX_CACHE_DIR",
            "RNNLAB_SESSION_STORE_MB"} <= set(found)  # a constant, env_float, os.environ.get(name, default)
    assert all(NAME.fullmatch(name) for name in found)


def test_every_variable_the_app_reads_is_documented():
    missing = {name: str(path) for name, path in read_names("rnnlab", "ui", "app_pages", "app.py").items()
               if name not in documented()}
    assert not missing, f"read by the code but not documented in docs/configuration.md: {missing}"


def test_every_documented_variable_is_read_somewhere():
    text = DOC.read_text(encoding="utf-8")
    read = set(read_names("rnnlab", "ui", "app_pages", "app.py", "tests"))
    stale = sorted(set(NAME.findall(text)) - read)
    assert not stale, f"docs/configuration.md names variables nothing reads: {stale}"
