"""The README's commands, CI and the app's own server configuration stay in step."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", (ROOT / "README.md").read_text())


def test_readme_gives_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("streamlit run serve.py")  # the server with its bounds
    assert "requirements-dev.txt" in commands[1] and commands[1].endswith("python -m pytest")


def ci_steps() -> list[str]:
    """The commands of .ci/run in order: each line's ``&&``-joined steps, without comments."""
    lines = [line.split("  #")[0].strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    return [step.strip() for line in lines if line and not line.startswith("#") for step in line.split(" && ")]


def test_ci_runs_the_readme_test_command_after_lint_and_types():
    steps = ci_steps()
    positions = [steps.index(step) for step in readme_commands()[1].split(" && ")]
    assert positions == sorted(positions)
    install, tests = positions[-2], positions[-1]
    assert steps[tests] == "python -m pytest"
    for check in ("ruff check .", "mypy"):
        assert install < steps.index(check) < tests, check


def test_requirements_are_pinned():
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "-r")):
                assert "==" in line, f"{name}: {line} is not pinned"


def test_the_app_serves_a_class_without_per_session_rescans_or_collections():
    """Streamlit's file watcher rescans every loaded module after a new session's first run, and its post-run
    garbage collection walks the whole heap after every run: both on the path of every student."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
    assert config["runner"]["postScriptGC"] is False
    readme = (ROOT / "README.md").read_text()
    assert "--server.fileWatcherType auto" in readme
