"""Each package's docstring is its map: it names every module and subpackage it holds, and only those."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(p.parent for top in ("rnnlab", "ui") for p in (ROOT / top).rglob("__init__.py"))


def docstring(package: Path) -> str:
    return ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8"))) or ""


def members(package: Path) -> list[str]:
    """The package's modules (``__init__`` aside; ``__main__`` counts) and subpackages."""
    modules = [p.stem for p in package.glob("*.py") if p.stem != "__init__"]
    subpackages = [p.name for p in package.iterdir() if (p / "__init__.py").is_file()]
    return sorted(modules + subpackages)


def named(doc: str, module: str) -> bool:
    """Whether ``doc`` names ``module`` in backquotes: :mod:`.module`, :mod:`pkg.module`, ``module``."""
    return re.search(rf"`(?:[\w.]*\.)?{re.escape(module)}`", doc) is not None


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_package_docstring_names_every_module(package: Path):
    doc = docstring(package)
    missing = [m for m in members(package) if not named(doc, m)]
    assert not missing, f"{package.relative_to(ROOT)}/__init__.py's docstring does not name: {', '.join(missing)}"


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_package_docstring_names_no_module_that_is_gone(package: Path):
    dotted = ".".join(package.relative_to(ROOT).parts)
    relative = re.findall(r":mod:`\.(\w+)`", docstring(package))
    absolute = re.findall(rf":mod:`{re.escape(dotted)}\.(\w+)`", docstring(package))
    gone = sorted(set(relative + absolute) - set(members(package)))
    assert not gone, f"{package.relative_to(ROOT)}/__init__.py's docstring names modules it lacks: {', '.join(gone)}"


def test_the_architecture_map_names_every_package_and_top_level_module():
    """docs/architecture.md's table of layers names each package of rnnlab (and its top-level modules), ui/,
    app_pages/ and app.py: a package added without a place on the map fails here."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = text[text.index("## Layers"):text.index("\n## ", text.index("## Layers") + 1)]
    rnnlab = ROOT / "rnnlab"
    wanted = ["app.py", "app_pages/", "ui/"]
    wanted += [f"rnnlab/{p.name}/" for p in sorted(rnnlab.iterdir()) if (p / "__init__.py").is_file()]
    wanted += [f"rnnlab/{p.name}" for p in sorted(rnnlab.glob("*.py")) if p.name != "__init__.py"]
    server = rnnlab / "server"
    wanted += [f"rnnlab/server/{p.name}/" for p in sorted(server.iterdir()) if (p / "__init__.py").is_file()]
    short = {f"rnnlab/{p.name}" for p in rnnlab.glob("*.py")}  # the base modules may be named without rnnlab/
    missing = [w for w in wanted
               if f"`{w}`" not in table and not (w in short and f"`{w.removeprefix('rnnlab/')}`" in table)]
    assert not missing, f"docs/architecture.md's layers table does not name: {', '.join(missing)}"



THREAT_TABLES = [("docs/scale-out.md", "## Security"), ("docs/robustness.md", "| attack | protected by")]
NAMED_TEST = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+)`|` \(([^|]*?)\)|`)")


def table_rows(doc: str, start: str) -> list[str]:
    """The body rows of the first table at or after ``start`` in ``doc``."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    lines = text[text.index(start):].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[first + 2:]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


@pytest.mark.parametrize(("doc", "start"), THREAT_TABLES, ids=[d for d, _ in THREAT_TABLES])
def test_every_threat_row_names_tests_that_exist(doc: str, start: str):
    """Each row of a threat table names what shows it: test files that exist, and every test it names
    (``tests/x.py::test_y``, or ``tests/x.py`` (``test_y`` ...)) defined there; only a row shown otherwise
    ("tried as above", "the rows above") names no file."""
    rows = table_rows(doc, start)
    assert len(rows) >= 4, rows
    wrong = []
    for row in rows:
        shown_by = row.rstrip().removesuffix("|").rsplit("|", 1)[-1]
        named = NAMED_TEST.findall(shown_by)
        if not named and not re.search(r"tried as above|the rows above", shown_by):
            wrong.append(f"a row names no test: {row[:70]}")
        for path, one, several in named:
            source = ROOT / path
            code = source.read_text(encoding="utf-8") if source.is_file() else ""
            if not code:
                wrong.append(f"no file {path}")
            wrong += [f"no {name} in {path}" for name in re.findall(r"\btest_\w+", f"{one} {several}")
                      if code and f"def {name}(" not in code]
    assert not wrong, f"{doc}'s threat table: " + "; ".join(wrong)


# ---- README's layout block ----------------------------------------------------------------------------------------
NOT_FOLDERS_HERE = {"pages/", "test-artifacts/"}  # named as what the layout is not, or what a test run writes


@dataclass
class Entry:
    folder: Path  # where the entry's names are
    names: list[str]
    words: str  # what the block says of them


def layout_entries() -> list[Entry]:
    """README.md's layout block as entries: the names in its first column (a folder, or modules side by side),
    under the folder of the entry above at a smaller indent, with the words beside and below them."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("```\n", text.index("## Layout")) + 4
    block = text[start:text.index("```", start)]
    entries: list[Entry] = []
    parents: dict[int, Path] = {0: ROOT}
    for line in block.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if indent >= 8:  # the words of the entry above, continued
            entries[-1].words += " " + line.strip()
            continue
        first, words = (re.split(r"\s{2,}", line.strip(), maxsplit=1) + [""])[:2]
        names = first.split()
        entries.append(Entry(parents[indent], names, words.strip()))
        if names[0].endswith("/"):
            parents[indent + 2] = parents[indent] / names[0]
    return entries


def named_files(words: str) -> set[str]:
    """The modules (``x.py``, ``explore_*.py``) and folders (``x/``) the words name."""
    return set(re.findall(r"[\w*]+\.py\b", words)) | set(re.findall(r"(?<![\w./-])[\w-]+/(?![\w])", words))


def test_every_file_and_folder_the_layout_names_exists():
    wrong = []
    for entry in layout_entries():
        for name in entry.names:
            if not (entry.folder / name).exists():
                wrong.append(f"{entry.folder.relative_to(ROOT)}/{name}")
        where = entry.folder / entry.names[0] if entry.names[0].endswith("/") else entry.folder
        for name in named_files(entry.words) - NOT_FOLDERS_HERE:
            if not any(where.rglob(name.rstrip("/"))):
                wrong.append(f"{name} in the words of {entry.names[0]}")
    assert not wrong, f"README's layout names what is not there: {wrong}"


def test_everything_there_is_named_by_the_layout():
    """The top level's code and documents, every package and module of rnnlab/ and of rnnlab/server/ (as an entry
    or in its folder's words), every module of a server package (in its words) and every document of docs/."""
    entries = layout_entries()
    by_folder = {entry.folder / entry.names[0]: entry for entry in entries if entry.names[0].endswith("/")}
    entries_in = {folder: {name.rstrip("/") for e in entries if e.folder == folder for name in e.names}
                  for folder in {e.folder for e in entries}}
    missing = []
    top = [p for p in ROOT.iterdir() if not p.name.startswith(".")
           and (p.suffix == ".py" or (p.is_dir() and (any(p.rglob("*.py")) or any(p.glob("*.md")))))]
    missing += [p.name for p in top if p.name not in entries_in[ROOT]]
    for folder in (ROOT / "rnnlab", ROOT / "rnnlab" / "server"):
        words = named_files(by_folder[folder].words)
        for child in folder.iterdir():
            if child.name == "__init__.py" or not (child.suffix == ".py" or (child / "__init__.py").is_file()):
                continue
            if child.name not in entries_in.get(folder, set()) and child.name not in words | {f"{child.name}/"}:
                missing.append(str(child.relative_to(ROOT)))
    for package in sorted((ROOT / "rnnlab" / "server").iterdir()):
        if (package / "__init__.py").is_file():
            if package not in by_folder:
                continue  # missing as a whole: found above
            words = named_files(by_folder[package].words)
            missing += [str(m.relative_to(ROOT)) for m in sorted(package.glob("*.py"))
                        if m.name != "__init__.py" and m.name not in words]
    documents = by_folder[ROOT / "docs"].words
    missing += [f"docs/{d.name}" for d in sorted((ROOT / "docs").glob("*.md")) if d.stem not in documents]
    assert not missing, f"README's layout does not name: {missing}"
