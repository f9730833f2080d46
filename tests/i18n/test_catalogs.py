"""The Chinese and Russian catalogs: up to date with the code, complete, and faithful to each message's placeholders,
markup and plural forms."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from babel.messages.plurals import get_plural

from rnnlab.i18n import CATALOGS, LOCALE_DIR, compile_catalogs, translations, using
from rnnlab.i18n.catalogs import POT, extract, load, missing, po_path

FOLDERS = sorted(CATALOGS.items())
# Markup that a translation keeps as many times as its message has it.
MARKUP = ("**", "`", "<br>", "<sup>", "</sup>", "<b>", "</b>", "<extra>", "</extra>", "$", "\n\n", "\n- ", "~~")
PLOTLY = re.compile(r"%\{[^}]*\}")
ICON = re.compile(r":material/[a-z_]+:")


def fields(text: str) -> list[tuple[str, str]]:
    """The named placeholders of ``text`` with their format specs, sorted."""
    return sorted((name, spec or "") for _, name, spec, _ in string.Formatter().parse(text) if name is not None)


def strings(message) -> list[str]:
    return list(message.string) if isinstance(message.string, (list, tuple)) else [message.string]


def ids(message) -> list[str]:
    return list(message.id) if isinstance(message.id, (list, tuple)) else [message.id]


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A template extracted from the code now, to compare with the committed one."""
    original = POT.read_text(encoding="utf-8")
    try:
        extract()
        fresh = POT.read_text(encoding="utf-8")
    finally:
        POT.write_text(original, encoding="utf-8")
    path = tmp_path_factory.mktemp("pot") / "rnnlab.pot"
    path.write_text(fresh, encoding="utf-8")
    return path


def msgids(path: Path) -> set[tuple[str, str | None]]:
    return {(str(ids(m)[0]), m.context) for m in load(path, "en") if m.id}


def test_the_committed_template_holds_every_message_of_the_code(template):
    assert msgids(template) == msgids(POT), "run: python -m rnnlab.i18n update"


@pytest.mark.parametrize(("lang", "folder"), FOLDERS)
def test_each_catalog_has_every_message_translated_and_none_fuzzy(template, lang, folder):
    catalog = load(po_path(folder), folder)
    assert {(str(ids(m)[0]), m.context) for m in catalog if m.id} == msgids(template)
    untranslated, fuzzy = missing(catalog)
    assert not untranslated, f"{len(untranslated)} untranslated in {lang}, e.g. {untranslated[:5]}"
    assert not fuzzy, f"{len(fuzzy)} fuzzy in {lang}, e.g. {fuzzy[:5]}"
    assert not list(catalog.obsolete)


@pytest.mark.parametrize(("lang", "folder"), FOLDERS)
def test_translations_keep_placeholders_markup_and_icons(lang, folder):
    wrong = []
    for message in load(po_path(folder), folder):
        if not message.id:
            continue
        source = ids(message)
        for i, text in enumerate(strings(message)):
            if not text:
                continue
            original = source[min(i, len(source) - 1)]
            plural_fields = set(fields(source[0])) | set(fields(source[-1]))
            if len(source) > 1:  # a plural form may leave out the count ("one" in Russian: 'одна ячейка')
                if not set(fields(text)) <= plural_fields | {("n", "")}:
                    wrong.append((original, text, "placeholders"))
            elif fields(text) != fields(original):
                wrong.append((original, text, "placeholders"))
            if sorted(PLOTLY.findall(text)) != sorted(PLOTLY.findall(original)):
                wrong.append((original, text, "Plotly %{...}"))
            if sorted(ICON.findall(text)) != sorted(ICON.findall(original)):
                wrong.append((original, text, "icons"))
            for mark in MARKUP:
                if text.count(mark) != original.count(mark):
                    wrong.append((original, text, repr(mark)))
    assert not wrong, "\n".join(f"{why}: {o!r} -> {t!r}" for o, t, why in wrong[:20])


@pytest.mark.parametrize(("lang", "folder"), FOLDERS)
def test_plural_forms_are_the_languages_own_and_every_form_is_there(lang, folder):
    catalog = load(po_path(folder), folder)
    rule = get_plural(folder)
    assert catalog.num_plurals == rule.num_plurals
    assert catalog.plural_expr == rule.plural_expr
    for message in catalog:
        if message.id and message.pluralizable:
            assert len(strings(message)) == rule.num_plurals and all(strings(message)), message.id


def test_russian_counts_take_their_three_forms():
    with using("ru"):
        forms = {n: translations("ru").ngettext("{n} step", "{n} steps", n) for n in (1, 2, 5, 11, 21, 22, 46)}
    if forms[1] == "{n} step":  # the message is not in the catalog: nothing to check
        pytest.skip("no counted step message in the catalog")
    assert forms[1] == forms[21] and forms[2] == forms[22] and forms[5] == forms[11] == forms[46]
    assert len({forms[1], forms[2], forms[5]}) == 3


def test_catalogs_compile_and_load(tmp_path):
    folder = compile_catalogs(tmp_path)
    for locale in CATALOGS.values():
        assert (folder / locale / "LC_MESSAGES" / "rnnlab.mo").stat().st_size > 0
    assert LOCALE_DIR.is_dir()
