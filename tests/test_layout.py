"""Where code lives: app_pages/ holds page scripts only, rnnlab/ has no Streamlit, modules stay small, no module
uses another's private names, and nothing shown or documented points outside the repository."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.app_pages import PAGES as APP_PAGES

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600
SOURCES = sorted([ROOT / "app.py", ROOT / "serve.py", *(ROOT / "app_pages").glob("*.py"), *(ROOT / "ui").rglob("*.py"),
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


def test_app_pages_folder_holds_only_the_pages_app_py_registers():
    registered = {page.name for page in APP_PAGES}
    assert registered and all(page.script == f"app_pages/{page.name}.py" for page in APP_PAGES)
    assert {p.stem for p in (ROOT / "app_pages").glob("*.py")} == registered
    for path in SOURCES + sorted((ROOT / "tests").rglob("*.py")):
        assert not any(m == "app_pages" or m.startswith("app_pages.") for m in imported_modules(path)), path
    assert not (ROOT / "pages").exists(), "a folder named pages/ puts Streamlit in its legacy mode (see app.py)"


def test_rnnlab_never_imports_streamlit():
    # The two benchmark rows that drive the app from outside with AppTest, as a test does.
    drivers = {ROOT / "rnnlab" / "bench" / "app_latency.py", ROOT / "rnnlab" / "bench" / "first_link.py"}
    for path in set((ROOT / "rnnlab").rglob("*.py")) - drivers:
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
                    private = alias.name.startswith("_") and alias.name != "_"  # _ is gettext's name, not private
                    assert not private, f"{path}: from {node.module} import {alias.name}"
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


# ---- imports go one way ---------------------------------------------------------------------------------------
# Layers from the bottom: a module may import its own layer and those below it, never one above. Inside rnnlab the
# server (one server, many users) sits above the core (everything that computes), and the entry points above both.
LAYERS = (
    ("rnnlab", "rnnlab.i18n", "rnnlab.text", "rnnlab.device", "rnnlab.norms", "rnnlab.memory"),
    ("rnnlab.model",),
    ("rnnlab.config", "rnnlab.grids"),
    ("rnnlab.training",),
    ("rnnlab.probing",),
    ("rnnlab.sweep",),
    ("rnnlab.figures", "rnnlab.files", "rnnlab.flaxapi"),
    ("rnnlab.sharing", "rnnlab.session"),
    ("rnnlab.server",),
    ("rnnlab.cli", "rnnlab.__main__", "rnnlab.bench", "rnnlab.cluster"),
    ("ui",),
    ("app", "app_pages", "serve"),
)
SERVER = LAYERS.index(("rnnlab.server",))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def ours(name: str) -> bool:
    return name.split(".")[0] in ("rnnlab", "ui", "app_pages", "app", "serve")


# The doors' helper imports what a door's table names, by a name it is given: the tables are read in the doors.
DOOR_HELPER = ROOT / "rnnlab" / "server" / "doors.py"


def door_table(module_tree: ast.Module) -> dict[str, str]:
    """A package door's ``DOOR`` table (a name, and the module it comes from), as written: a dict of strings, with
    ``**{name: MODULE for name in (...)}`` parts and module-level names bound to strings."""
    constants = {target.id: node.value.value for node in module_tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    for node in module_tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["DOOR"]:
            return eval(compile(ast.Expression(node.value), "DOOR", "eval"), {"__builtins__": {}, **constants})
    return {}


def string_imports(module_tree: ast.Module, known: set[str]) -> set[str]:
    """Modules of ours imported by name: ``importlib.import_module(X)`` (or ``__import__(X)``) with X a string, a
    module-level name bound to one, or an f-string (every module under its constant start), and those a door's
    ``DOOR`` table names (its helper imports them when a name is first asked for)."""
    constants = {target.id: node.value.value for node in module_tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}
    found = set(door_table(module_tree).values())
    for node in ast.walk(module_tree):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("import_module", "__import__"):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.add(arg.value)
        elif isinstance(arg, ast.Name) and arg.id in constants:
            found.add(constants[arg.id])
        elif isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
            start = str(arg.values[0].value)
            found.update(m for m in known if m.startswith(start) and not m[len(start):].startswith("_"))
        else:
            raise AssertionError(f"an import by a name the layout test cannot read: {ast.unparse(node)}")
    return {name for name in found if ours(name)}


def resolved_imports(path: Path) -> set[str]:
    """Every module of ours that ``path`` imports, at the top, inside a function or by name (``from a import b``
    names ``a.b`` when b is a module)."""
    known = {module_name(p) for p in SOURCES}
    module_tree = tree(path)
    found = string_imports(module_tree, known) if path != DOOR_HELPER else set()
    for node in ast.walk(module_tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if ours(alias.name))
        elif isinstance(node, ast.ImportFrom) and node.module and ours(node.module):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in known else node.module)
    return found


def test_imports_by_name_are_seen():
    known = {module_name(p) for p in SOURCES}
    module_tree = ast.parse('import importlib\nNAME = "rnnlab.server.work.jobs"\n'
                            'def f(m):\n    importlib.import_module(NAME)\n    importlib.import_module("ui.work")\n'
                            '    return importlib.import_module(f"rnnlab.bench.{m}")\n')
    found = string_imports(module_tree, known)
    assert {"rnnlab.server.work.jobs", "ui.work", "rnnlab.bench.steps"} <= found
    assert resolved_imports(ROOT / "rnnlab" / "server" / "work" / "executors.py") >= {"rnnlab.server.on_ray.executor"}
    assert resolved_imports(ROOT / "rnnlab" / "server" / "work" / "__init__.py") >= {"rnnlab.server.work.jobs"}


def layer_of(name: str) -> int:
    best, index = "", -1
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
                best, index = prefix, i
    assert index >= 0, f"{name} belongs to no layer: add it to LAYERS"
    return index


def import_graph() -> dict[str, set[str]]:
    return {module_name(p): resolved_imports(p) for p in SOURCES}


def test_every_import_goes_down_or_stays_in_its_layer():
    wrong = []
    for module, imports in import_graph().items():
        for imported in imports:
            if layer_of(imported) > layer_of(module):
                wrong.append(f"{module} imports {imported}")
    assert not wrong, "\n".join(sorted(wrong))


def test_the_core_never_imports_the_server_or_the_entry_points():
    for module, imports in import_graph().items():
        if layer_of(module) < SERVER:
            assert not [i for i in imports if layer_of(i) >= SERVER], module


def test_no_import_cycle_even_through_imports_inside_functions():
    graph = import_graph()
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(nxt):] + [nxt]))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node)


# ---- heavy work goes through the seam ---------------------------------------------------------------------------
# Pages and ui/ reach the server only through its package doors: the work seam (rnnlab.server.work: how work runs,
# the executor chosen for this process, and the work it runs, rnnlab.server.work.jobs), who is asking
# (rnnlab.server.access: the client key, a bounded page's notice, the page runs' turns), what is kept for a reload
# (rnnlab.server.storage: the tab's token and its runs) and the classes' answers (rnnlab.server.answers). A door
# hands out only the names of its DOOR table, and they never call heavy work themselves: they name it in a
# Work(...) that the executor runs.
DOORS = ("rnnlab.server.work", "rnnlab.server.access", "rnnlab.server.storage", "rnnlab.server.answers")


def door_path(door: str) -> Path:
    package = ROOT.joinpath(*door.split("."))
    return package / "__init__.py" if package.is_dir() else package.with_suffix(".py")


def through_a_door(name: str) -> bool:
    """Whether importing ``name`` goes through a door: the door itself, or a module its table hands out."""
    parent, _, last = name.rpartition(".")
    return name in DOORS or (parent in DOORS and door_table(tree(door_path(parent))).get(last) == name)


HEAVY_CALLS = {"Run", "run_call", "compute_call", "shared_call_job", "train_steps", "run_sweep",
               "compile_in_worker", "trained_params", "run_grad_through_time", "run_connectivity", "start_robustness",
               "decay_sweep", "carry_grad_norms", "connectivity", "look"}
HEAVY_METHODS = {"train"}  # run.train(...); a function of that name elsewhere is not a run's


def seam_breaks(path: Path) -> list[str]:
    found = [f"imports {name}" for name in resolved_imports(path)
             if name.startswith("rnnlab.server") and not through_a_door(name)]
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in HEAVY_CALLS or (isinstance(func, ast.Attribute) and name in HEAVY_METHODS):
                found.append(f"line {node.lineno} calls {name}")
    return found


def test_each_door_hands_out_its_table_and_opening_one_loads_nothing_heavy():
    """A door's names are those of its table (``__all__`` as well, so that the linter and readers see them), each
    found where the table says; importing the doors alone imports neither JAX nor Streamlit."""
    import importlib
    import subprocess
    import sys

    for door in DOORS[:-1]:
        module = importlib.import_module(door)
        table = door_table(tree(door_path(door)))
        assert sorted(module.__all__) == sorted(table), door
        for name, where in table.items():
            value = getattr(module, name)
            assert value is importlib.import_module(where) or value is getattr(importlib.import_module(where), name)
    light = ("import sys, rnnlab.server.work, rnnlab.server.access, rnnlab.server.storage\n"
             "print(sorted(m for m in ('jax', 'streamlit', 'pandas') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", light], cwd=ROOT, capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr


def test_pages_and_ui_reach_heavy_work_only_through_the_executor():
    scripts = sorted([*(ROOT / "app_pages").glob("*.py"), *(ROOT / "ui").rglob("*.py")])
    breaks = {str(p.relative_to(ROOT)): b for p in scripts if (b := seam_breaks(p))}
    assert not breaks, breaks


MAX_FUNCTION_LINES = 80


def test_no_function_is_over_80_lines():
    """Every function and method of rnnlab/, ui/, app_pages/ and app.py, from its ``def`` to its last line."""
    long = [f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for path in SOURCES for node in ast.walk(tree(path))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno is not None and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, "functions over 80 lines:\n" + "\n".join(long)


LANGUAGE_CODES = {"en", "zh", "ru"}


def language_branches(path: Path) -> list[str]:
    """Where ``path`` branches on the reader's language: a comparison of a call of ``language`` (or a name bound to
    one), or a comparison with a language's code (``lang == "zh"``, ``x != ENGLISH``, ``lang in ("zh", "ru")``)."""
    module = tree(path)
    bound = {target.id for node in ast.walk(module) if isinstance(node, ast.Assign)
             and isinstance(node.value, ast.Call) and getattr(node.value.func, "id", None) == "language"
             for target in node.targets if isinstance(target, ast.Name)}

    def is_language(node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            return getattr(node.func, "id", getattr(node.func, "attr", None)) == "language"
        if isinstance(node, ast.Name):
            return node.id in bound or node.id == "ENGLISH"
        if isinstance(node, ast.Constant):
            return node.value in LANGUAGE_CODES
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            return bool(node.elts) and all(is_language(e) for e in node.elts)
        return False

    lines = sorted(node.lineno for node in ast.walk(module)
                   if isinstance(node, ast.Compare) and any(is_language(n) for n in (node.left, *node.comparators)))
    return [f"{path.relative_to(ROOT)}:{line}" for line in lines]


def test_only_rnnlab_i18n_branches_on_the_readers_language():
    """How each language writes lists, sentences, numbers and plurals lives in rnnlab/i18n; code elsewhere asks it
    (join_list, join_sentences, tn...) instead of comparing the language itself."""
    found = [where for path in SOURCES if ROOT / "rnnlab" / "i18n" not in path.parents
             for where in language_branches(path)]
    assert not found, "branches on the reader's language outside rnnlab/i18n:\n" + "\n".join(found)
    planted = ROOT / "tests" / "fixtures" / "language_branch.py"
    assert language_branches(planted) == [f"{planted.relative_to(ROOT)}:{n}" for n in (5, 6, 8, 9)]


def test_the_true_size_vocabulary_lives_in_one_light_module():
    """The floors, the words for a zero and the size written from its log10 are defined in rnnlab/true_sizes.py only,
    which imports nothing but the language; the figures' true-size axis takes them there, not from the probes."""
    vocabulary = {"F32_TINY", "F64_TINY", "F32_LOG10_FLOOR", "F64_LOG10_FLOOR", "EXACT_ZERO", "FLOAT32_ZERO",
                  "format_log10"}
    home = ROOT / "rnnlab" / "true_sizes.py"
    defined = {}
    for path in SOURCES:
        for node in tree(path).body:
            names = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            names += [node.name] if isinstance(node, ast.FunctionDef) else []
            defined.update({name: path for name in names if name in vocabulary and path != home})
    assert not defined, defined
    assert resolved_imports(home) == {"rnnlab.i18n"}
    axis = resolved_imports(ROOT / "rnnlab" / "figures" / "log10_scale.py")
    assert not [m for m in axis if m.startswith(("rnnlab.probing", "rnnlab.norms", "rnnlab.training"))], axis


def test_no_branch_on_a_setting_s_name_outside_the_tables():
    """What a setting (or a sweep field) does differently is a field of its entry in the settings table
    (rnnlab/config.py) or the grids' table (rnnlab/grids.py), never ``if name == "carry_init"`` in the code that
    reads them: a comparison of a name (``name``, ``x.name``) with a setting's name is found here."""
    from rnnlab.config import SETTING
    from rnnlab.grids import FIELDS

    names = set(SETTING) | set(FIELDS)

    def a_name(node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in ("name", "key", "field")) or (
            isinstance(node, ast.Attribute) and node.attr == "name")

    found = []
    for path in SOURCES:
        for node in ast.walk(tree(path)):
            if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
                continue
            right = node.comparators[0]
            values = [e.value for e in getattr(right, "elts", [right]) if isinstance(e, ast.Constant)]
            if a_name(node.left) and any(v in names for v in values):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "\n".join(found)
