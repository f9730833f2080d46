"""The interface's language: gettext catalogs (one domain, ``rnnlab``), chosen per script run, and the words of each
language in one place: numbers, lists, sentences, plural counts, the page's language tag and fonts.

One server serves every reader, so the language is a context variable that the entry point sets at the top of each
script run (:func:`set_language`), never a process-wide ``gettext.install``. English is the source language.

- ``_(text)``, ``ngettext(one, many, n)``, ``pgettext(context, text)``: the translation, as gettext gives it.
- ``t(text, **values)``, ``tn(one, many, n, **values)``, ``tp(context, text, **values)``: the translation with its
  named ``{placeholders}`` filled; a number in a placeholder is written the reader's way (``{x:.2g}`` gives
  ``1.6e-07`` in English, ``1.6×10⁻⁷`` in Chinese, ``1,6·10⁻⁷`` in Russian).
- ``N_(text)`` marks text made at import (a setting's label) for extraction; translate it where it is shown.
- :class:`Msg` is a message kept as its id and values (in session state, or made in a worker thread) and
  rendered in the language of whoever reads it: ``str(Msg(...))``; ``MsgN`` counts, ``sentences`` joins.
- ``join_list``, ``join_clauses``, ``join_sentences``, ``join_numbers``: words joined as the language joins them;
  ``count_for``: the count that gives a number its plural form as it prints. No other module compares the language.

:mod:`.typography` writes what is not a word the way each language does (minus sign, powers of ten, per cent,
brackets, a label's colon, quotes, ranges, a chart's ticks); the functions here pass it the reader's language.

The catalogs are ``rnnlab/i18n/locale/<locale>/LC_MESSAGES/rnnlab.po``; their ``.mo`` files are compiled from them
on first use whenever missing or older (:func:`compile_catalogs`). :mod:`.catalogs` (``python -m rnnlab.i18n``, see
:mod:`.__main__`) extracts the messages and keeps the catalogs up to date.
"""

from __future__ import annotations

import gettext
import math
import os
import re
import string
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from numbers import Number
from pathlib import Path
from typing import Any

from rnnlab.i18n import typography
from rnnlab.i18n.typography import NBSP as NBSP

DOMAIN = "rnnlab"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
ENGLISH = "en"
LANGUAGES: dict[str, str] = {"en": "English", "zh": "中文", "ru": "Русский"}  # each in its own language
CATALOGS: dict[str, str] = {"zh": "zh_Hans", "ru": "ru"}  # the catalog folder of each translated language
PSEUDO = "qps"  # a test-only language that marks every translated message: ⟦...⟧
PSEUDO_OPEN, PSEUDO_CLOSE = "⟦", "⟧"
ALIASES: dict[str, str] = {"zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "zh-tw": "zh", "zh-hk": "zh",
                           "zh-hant": "zh", "zh-mo": "zh", "ru-ru": "ru", "en-us": "en", "en-gb": "en"}

_current: ContextVar[str] = ContextVar("rnnlab_language", default=ENGLISH)
_lock = threading.Lock()
_translations: dict[str, gettext.NullTranslations] = {}


# ---- choosing the language ------------------------------------------------------------------------------------
def language() -> str:
    """The language of this script run (or thread): 'en', 'zh' or 'ru'."""
    return _current.get()


def set_language(lang: str) -> Token:
    """Make ``lang`` the language of this script run; returns the token to reset it with."""
    if lang not in LANGUAGES and lang != PSEUDO:
        raise ValueError(f"unknown language {lang!r}")
    return _current.set(lang)


@contextmanager
def using(lang: str) -> Iterator[None]:
    """Everything inside speaks ``lang``."""
    token = set_language(lang)
    try:
        yield
    finally:
        _current.reset(token)


def parse_language(text: str | None) -> str | None:
    """'zh', 'zh-CN', 'zh_Hans', 'RU' -> 'zh' / 'ru'; None for anything that is not one of the app's languages."""
    if text is None:
        return None
    key = str(text).strip().lower().replace("_", "-")
    if key in LANGUAGES:
        return key
    if key in ALIASES:
        return ALIASES[key]
    if key == PSEUDO and os.environ.get("RNNLAB_PSEUDO_LANGUAGE") == "1":
        return PSEUDO
    return None


def negotiate(accept_language: str | None, browser_locale: str | None = None) -> str:
    """The reader's language from the Accept-Language header (its q-order), then the browser's locale, else English.

    Only the app's languages match, by their primary tag: 'de-DE,ru;q=0.9' -> 'ru'; 'zh-TW' -> 'zh'; 'uk' -> 'en'.
    """
    prefs: list[tuple[float, int, str]] = []
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _sep, params = part.strip().partition(";")
        q = 1.0
        match = re.search(r"q\s*=\s*([0-9.]+)", params)
        if match:
            try:
                q = float(match.group(1))
            except ValueError:
                q = 0.0
        if tag and q > 0:
            prefs.append((-q, i, tag))
    for _q, _i, tag in sorted(prefs):
        found = parse_language(tag) or parse_language(tag.split("-")[0])
        if found and found != PSEUDO:
            return found
    if browser_locale:
        found = parse_language(browser_locale) or parse_language(browser_locale.replace("_", "-").split("-")[0])
        if found and found != PSEUDO:
            return found
    return ENGLISH


# ---- catalogs -------------------------------------------------------------------------------------------------
def compile_catalogs(out_dir: Path | None = None) -> Path:
    """Compile every ``.po`` catalog to ``.mo`` where the ``.mo`` is missing or older; returns the folder that holds
    them (the catalogs' own folder, or a private temporary one when that cannot be written)."""
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    target = out_dir or LOCALE_DIR
    for folder in CATALOGS.values():
        po = LOCALE_DIR / folder / "LC_MESSAGES" / f"{DOMAIN}.po"
        mo = target / folder / "LC_MESSAGES" / f"{DOMAIN}.mo"
        if not po.exists() or (mo.exists() and mo.stat().st_mtime >= po.stat().st_mtime):
            continue
        with po.open("rb") as f:
            catalog = read_po(f, locale=folder)
        try:
            mo.parent.mkdir(parents=True, exist_ok=True)
            tmp = mo.with_name(f".{mo.name}.{os.getpid()}.{threading.get_ident()}")
            with tmp.open("wb") as f:
                write_mo(f, catalog, use_fuzzy=False)
            tmp.replace(mo)
        except OSError:
            if out_dir is not None:
                raise
            return compile_catalogs(Path(tempfile.mkdtemp(prefix="rnnlab-locale-")))
    return target


class _Pseudo(gettext.NullTranslations):
    """Every message marked, so that text which never passed through the catalog stands out."""

    def gettext(self, message: str) -> str:
        return f"{PSEUDO_OPEN}{message}{PSEUDO_CLOSE}"

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return self.gettext(msgid1 if n == 1 else msgid2)

    def pgettext(self, context: str, message: str) -> str:
        return self.gettext(message)

    def npgettext(self, context: str, msgid1: str, msgid2: str, n: int) -> str:
        return self.ngettext(msgid1, msgid2, n)


def translations(lang: str) -> gettext.NullTranslations:
    """The catalog of ``lang`` (English: the messages as written), loaded once."""
    found = _translations.get(lang)
    if found is not None:
        return found
    with _lock:
        if lang not in _translations:
            if lang == PSEUDO:
                _translations[lang] = _Pseudo()
            elif lang in CATALOGS:
                folder = compile_catalogs()
                _translations[lang] = gettext.translation(DOMAIN, folder, languages=[CATALOGS[lang]],
                                                          fallback=True)
            else:
                _translations[lang] = gettext.NullTranslations()
        return _translations[lang]


def reload_catalogs() -> None:
    """Forget the loaded catalogs (after the ``.po`` files changed)."""
    with _lock:
        _translations.clear()


# ---- translating ----------------------------------------------------------------------------------------------
def _(message: str) -> str:
    """``message`` in the current language."""
    return translations(language()).gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for the catalog without translating it now (text made at import)."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    """The form of a counted message for ``n`` (Russian has three)."""
    return translations(language()).ngettext(singular, plural, int(n))


def pgettext(context: str, message: str) -> str:
    """``message`` in the current language, told apart from the same words elsewhere by ``context``."""
    return translations(language()).pgettext(context, message)


def t(message: str, /, **values: Any) -> str:
    """``message`` translated, its named placeholders filled (numbers written the reader's way)."""
    return fill(_(message), values)


def tn(singular: str, plural: str, n: int, /, **values: Any) -> str:
    """A counted message translated and filled; ``{n}`` is the count unless ``values`` name it."""
    return fill(ngettext(singular, plural, n), {"n": n, **values})


def tp(context: str, message: str, /, **values: Any) -> str:
    """``message`` in ``context`` translated and filled."""
    return fill(pgettext(context, message), values)


class Msg:
    """A message kept as its id and values (in session state, or made in a worker thread), rendered in the language
    of whoever reads it when shown: ``str(msg)``. One type, three shapes:

    - ``Msg(text, **values)``: a message; values may be messages themselves;
    - ``MsgN(one, many, n, **values)``: a counted message (its form chosen by ``n`` in the reader's language);
    - ``sentences(*parts)``: messages (or text kept as it is: code, Python's own words) said one after another, as
      :func:`join_sentences` joins them in the reader's language.

    Two messages are equal when their ids, counts, values and parts are; a message never equals its text.
    """

    __slots__ = ("message", "plural", "n", "values", "parts")

    def __init__(self, message: str, /, **values: Any):
        self.message, self.values = message, values
        self.plural: str | None = None
        self.n: int | None = None
        self.parts: tuple[Msg | str, ...] = ()

    def __str__(self) -> str:
        if self.parts:
            return join_sentences(*(str(part) for part in self.parts))
        if self.plural is not None and self.n is not None:
            return tn(self.message, self.plural, self.n, **self.values)
        return t(self.message, **self.values)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def key(self) -> tuple:
        """What tells two messages apart."""
        return ("Msg", self.message, self.plural, self.n, tuple(sorted((k, repr(v)) for k, v in self.values.items())),
                tuple(part.key() if isinstance(part, Msg) else part for part in self.parts))

    def __repr__(self) -> str:
        if self.parts:
            return f"sentences{self.parts!r}"
        if self.plural is not None:
            return f"MsgN({self.message!r}, {self.plural!r}, {self.n!r}, {self.values!r})"
        return f"Msg({self.message!r}, {self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Msg) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __getstate__(self) -> tuple:
        return (self.message, self.plural, self.n, self.values, self.parts)

    def __setstate__(self, state: tuple) -> None:
        self.message, self.plural, self.n, self.values, self.parts = state

    @property
    def counted(self) -> bool:
        """Whether this is a counted message (:func:`MsgN`)."""
        return self.plural is not None

    def value(self, name: str) -> Any:
        """The value of placeholder ``name`` (of the first sentence, for sentences); None where it has none."""
        first = self.parts[0] if self.parts else self
        return first.values.get(name) if isinstance(first, Msg) else None


def MsgN(singular: str, plural: str, n: int, /, **values: Any) -> Msg:
    """A counted message kept as its id, its count and its values (:class:`Msg`)."""
    message = Msg(singular, **values)
    message.plural, message.n = plural, int(n)
    return message


def sentences(*parts: Msg | str | None) -> Msg:
    """Messages said one after another, each in the reader's language when shown (:class:`Msg`); a part that is
    text is kept as it is (code, Python's own words), empty parts are left out, nested sentences flattened."""
    flat: list[Msg | str] = []
    for part in parts:
        if isinstance(part, Msg) and part.parts:
            flat.extend(part.parts)
        elif part:
            flat.append(part)
    message = Msg("")
    message.parts = tuple(flat)
    return message


def text(value: object) -> str:
    """A message, a marked string (translated) or any other value, as the reader reads it."""
    if isinstance(value, Msg):
        return str(value)
    if isinstance(value, str):
        return _(value) if value else value
    return str(value)


# ---- joining words: lists, clauses, sentences --------------------------------------------------------------------
def _babel_locale(lang: str | None = None) -> Any:
    from babel import Locale

    lang = lang or language()
    return Locale.parse(CATALOGS.get(lang, ENGLISH))


def join_list(items: Iterable[object], conjunction: bool = False) -> str:
    """Items listed in the reader's language, each as :func:`text` gives it: 'GRU, LSTM' (Chinese: 'GRU、LSTM', one
    list mark); with ``conjunction``, the last joined by 'and' as Babel's ``format_list`` writes it ('a, b, and c',
    'a、b和c', 'a, b и c')."""
    shown = [text(item) if isinstance(item, Msg) else str(item) for item in items]
    if not shown:
        return ""
    if conjunction:
        from babel.lists import format_list

        return format_list(shown, "standard", _babel_locale())
    middle = _babel_locale().list_patterns["standard"]["middle"]
    joined = shown[0]
    for item in shown[1:]:
        joined = middle.format(joined, item)
    return joined


def join_numbers(values: Iterable[float], spec: str = "g") -> str:
    """Numbers listed, each written the reader's way: '0.5, 1.2' ('0,5; 1,2' in Russian, where a comma is the
    decimal mark; '0.5，1.2' in Chinese, with a zero-width space after each mark so that a narrow table cell wraps
    the line as the spaces of the others do)."""
    return typography.number_separator(language()).join(number(value, spec) for value in values)


def join_clauses(parts: Iterable[object]) -> str:
    """Clauses of one sentence, one after the other: '; ' (Chinese: '；')."""
    mark = "；" if language() == "zh" else "; "
    return mark.join(str(p) for p in parts)


def join_sentences(*parts: object) -> str:
    """Whole sentences, one after the other (the empty ones left out): a space between them, none in Chinese."""
    mark = "" if language() == "zh" else " "
    return mark.join(s for s in (str(p) for p in parts if p is not None) if s)


def times_sign() -> str:
    """Between the factors of a product in words ('5 seeds x 4 learning rates'): ' x ' in English, ' × ' else."""
    return typography.times_sign(language())


def count_for(value: float, spec: str = ".3g") -> int:
    """The count that chooses a counted message's form for ``value`` as ``spec`` writes it (``tn``'s ``n``): the
    whole number itself when it prints as one ('150 steps': «150 шагов»), 2 for a fraction (English and Russian
    write a fraction as the plural of 2: '2.9 steps', «2,9 шага»); a number that is not finite counts as 2."""
    try:
        printed = float(format(value, spec).replace(",", ""))
    except (TypeError, ValueError):
        return 2
    if math.isfinite(printed) and printed.is_integer():
        return abs(int(printed))
    return 2


def bilingual(message: str, /, **values: Any) -> str:
    """``message`` in the reader's language, followed by its English where that differs (for a reader who chose a
    language by mistake)."""
    said = t(message, **values)
    with using(ENGLISH):
        english = t(message, **values)
    return said if english == said else f"{said} {english}"


def selectable_language() -> str:
    """The language in use as the language selector shows it (a test-only language shows as English)."""
    return language() if language() in LANGUAGES else ENGLISH


# ---- numbers --------------------------------------------------------------------------------------------------
def localize_number(written: str, lang: str | None = None) -> str:
    """A number Python wrote ('1,234.5', '-1.6e-07', '12.5%') as ``lang`` (the reader's) writes it in prose
    (:func:`rnnlab.i18n.typography.localize_number`): English unchanged; Russian '−1,6·10⁻⁷', '12,5 %'; Chinese
    '−1.6×10⁻⁷'."""
    return typography.localize_number(written, lang or language())


def tick_text(value: float, digits: int = 3) -> str:
    """A chart's tick label for ``value``, written the reader's way (:func:`rnnlab.i18n.typography.tick_text`)."""
    return typography.tick_text(value, language(), digits)


def number_range(low: object, high: object) -> str:
    """'low-high' as the reader writes a range (an en dash in Chinese and Russian)."""
    return typography.number_range(str(low), str(high), language())


def parenthesized(text: str, note: str) -> str:
    """``text`` with ``note`` in the reader's brackets: 'loss (log scale)', '损失（对数）'."""
    return typography.parenthesized(text, note, language())


def labelled(label: str, value: str) -> str:
    """'label: value' with the reader's colon ('A：GRU' in Chinese)."""
    return typography.labelled(label, value, language())


def quoted(text: str) -> str:
    """``text`` in the reader's quotes: “…” or «…»."""
    return typography.quoted(text, language())


class _Formatter(string.Formatter):
    def format_field(self, value: Any, format_spec: str) -> str:
        if isinstance(value, Msg):
            value = str(value)
        written = format(value, format_spec)
        if isinstance(value, Number) and not isinstance(value, bool):
            return localize_number(written)
        if hasattr(value, "dtype") and hasattr(value, "item"):  # a numpy scalar
            return localize_number(written)
        return written


_FORMATTER = _Formatter()


def fill(template: str, values: Mapping[str, Any]) -> str:
    """``template``'s named placeholders filled from ``values``, numbers written the current language's way."""
    if not values:
        return template
    return _FORMATTER.vformat(template, (), dict(values))


def number(value: float, spec: str = "g") -> str:
    """``value`` formatted with ``spec`` and written the reader's way (for text outside a message)."""
    return localize_number(format(value, spec))


DOCUMENT_LANGUAGES = {"en": "en", "zh": "zh-Hans", "ru": "ru"}  # each language's BCP 47 tag (<html lang>)
# The fonts each language names, first choice first: Simplified Chinese faces before any other, so that a browser whose
# default CJK face is Japanese (centred ：and ？, other glyph forms) draws Chinese as it is written in China.
FONT_FAMILIES: dict[str, tuple[str, ...]] = {
    "zh": ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "PingFang SC", "Microsoft YaHei",
           "WenQuanYi Micro Hei", "Source Sans", "Source Sans Pro", "sans-serif"),
}
GENERIC_FONTS = {"serif", "sans-serif", "monospace", "system-ui"}


def document_language(lang: str | None = None) -> str:
    """The page's language tag for ``lang`` (the reader's by default): 'en', 'zh-Hans', 'ru'."""
    return DOCUMENT_LANGUAGES.get(lang or language(), ENGLISH)


def css_font_family(lang: str | None = None) -> str:
    """The CSS ``font-family`` value of ``lang``'s fonts ('' where the language names none: the default fonts)."""
    names = FONT_FAMILIES.get(lang or language(), ())
    return ", ".join(name if name in GENERIC_FONTS else f'"{name}"' for name in names)


def language_layout(lang: str | None = None) -> dict[str, Any]:
    """What a Plotly figure's layout needs for the language: its decimal mark, and the fonts it names."""
    lang = lang or language()
    layout: dict[str, Any] = {}
    if lang == "ru":
        layout["separators"] = ", "  # Plotly's decimal mark, then its thousands separator
    family = css_font_family(lang)
    if family:  # Streamlit's chart theme names its own font for the title and the hover labels: named here too
        layout.update(font={"family": family}, title_font_family=family, hoverlabel_font_family=family)
    return layout
