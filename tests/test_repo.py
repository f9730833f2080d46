"""The README's commands and CI stay in step."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(python3 -m venv[^\n]*)\n```", (ROOT / "README.md").read_text())


def test_readme_gives_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("streamlit run app.py")
    assert "requirements-dev.txt" in commands[1] and commands[1].endswith("python -m pytest")


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci.splitlines()


def test_requirements_are_pinned():
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "-r")):
                assert "==" in line, f"{name}: {line} is not pinned"
