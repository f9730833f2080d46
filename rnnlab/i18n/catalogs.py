"""Keeping the catalogs: extract the messages (Babel), update the Chinese and Russian catalogs, report what is left.

    python -m rnnlab.i18n update          # extract every message into rnnlab.pot, then update (or create) the .po files
    python -m rnnlab.i18n status          # untranslated and fuzzy messages per language
    python -m rnnlab.i18n merge A.po ...  # take the translations of other copies of a catalog (same locale folder)

English is the source language: the messages are the English text in the code. Extraction reads app.py, app_pages/,
ui/ and rnnlab/ with the keywords below; translators edit the ``.po`` files; the app compiles them itself.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.frontend import CommandLineInterface
from babel.messages.pofile import read_po, write_po

from rnnlab.i18n import CATALOGS, DOMAIN, LOCALE_DIR

ROOT = LOCALE_DIR.parents[2]
SOURCES = ("app.py", "app_pages", "ui", "rnnlab")
KEYWORDS = ("_", "N_", "t", "tn:1,2", "tp:1c,2", "ngettext:1,2", "pgettext:1c,2", "Msg", "MsgN:1,2")
POT = LOCALE_DIR / f"{DOMAIN}.pot"
MAPPING = LOCALE_DIR / "babel.cfg"


def po_path(folder: str) -> Path:
    """The catalog of one locale folder ('zh_Hans', 'ru')."""
    return LOCALE_DIR / folder / "LC_MESSAGES" / f"{DOMAIN}.po"


def _babel(*args: str) -> None:
    CommandLineInterface().run(["pybabel", "-q", *args])


def extract() -> Path:
    """Every message of the code into the template ``rnnlab.pot``."""
    keywords: list[str] = []
    for k in KEYWORDS:
        keywords += ["-k", k]
    _babel("extract", "--no-default-keywords", *keywords, "-F", str(MAPPING), "--add-comments=TRANSLATORS:",
           "--sort-by-file", "--no-wrap", "--project=rnnlab", "--copyright-holder=rnnlab",
           "-o", str(POT), *(str(ROOT / s) for s in SOURCES))
    text = POT.read_text(encoding="utf-8")
    POT.write_text(text.replace(str(ROOT) + "/", ""), encoding="utf-8")  # locations relative to the repository
    return POT


def update() -> None:
    """Extract, then bring each language's catalog up to date with the template (creating it if missing)."""
    extract()
    for folder in CATALOGS.values():
        command = "update" if po_path(folder).exists() else "init"
        extra = ["--no-wrap", "--ignore-obsolete", "--no-fuzzy-matching"] if command == "update" else ["--no-wrap"]
        _babel(command, "-D", DOMAIN, "-i", str(POT), "-d", str(LOCALE_DIR), "-l", folder, *extra)


def load(path: Path, folder: str) -> Catalog:
    """A ``.po`` file as a Babel catalog."""
    with path.open("rb") as f:
        return read_po(f, locale=folder)


def save(catalog: Catalog, path: Path) -> None:
    """Write ``catalog`` to ``path`` as a ``.po`` file."""
    with path.open("wb") as f:
        write_po(f, catalog, width=0, sort_by_file=True, ignore_obsolete=True)


def missing(catalog: Catalog) -> tuple[list[str], list[str]]:
    """The ids of the untranslated and of the fuzzy messages."""
    untranslated, fuzzy = [], []
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        if message.fuzzy:
            fuzzy.append(str(message.id))
        elif not all(strings):
            untranslated.append(str(message.id))
    return untranslated, fuzzy


def merge(sources: Iterable[Path]) -> int:
    """Copy translations from other copies of the catalogs (e.g. ``other/rnnlab/i18n/locale``): each source is a
    ``.po`` file whose parent folders name its locale; a message untranslated here takes the source's
    translation. Returns how many messages were filled."""
    filled = 0
    for source in sources:
        folder = next(f for f in CATALOGS.values() if f in source.parts)
        target = po_path(folder)
        mine, theirs = load(target, folder), load(source, folder)
        for message in theirs:
            if not message.id or message.fuzzy or not message.string:
                continue
            here = mine.get(message.id, message.context)
            if here is None or message.fuzzy:
                continue
            strings = here.string if isinstance(here.string, (list, tuple)) else [here.string]
            if not all(strings):
                here.string = message.string
                here.flags.discard("fuzzy")
                filled += 1
        save(mine, target)
    return filled


def main(argv: list[str]) -> int:
    """The command line."""
    if not argv or argv[0] not in ("update", "status", "merge", "extract"):
        print(__doc__)
        return 2
    if argv[0] == "extract":
        print(extract())
    elif argv[0] == "update":
        update()
    elif argv[0] == "merge":
        print(f"{merge(Path(p) for p in argv[1:])} messages filled")
    bad = 0
    for lang, folder in CATALOGS.items():
        if not po_path(folder).exists():
            continue
        untranslated, fuzzy = missing(load(po_path(folder), folder))
        total = len([m for m in load(po_path(folder), folder) if m.id])
        print(f"{lang} ({folder}): {total} messages, {len(untranslated)} untranslated, {len(fuzzy)} fuzzy")
        bad += len(untranslated) + len(fuzzy)
    return 0 if argv[0] != "status" or bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
