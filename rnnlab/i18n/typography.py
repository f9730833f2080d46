"""How each language writes what is not a word: numbers (decimal mark, minus sign, powers of ten, per cent), ranges,
brackets, a label's colon, quotes, and the tick labels of a chart's number axis. One place for prose, tables and
charts alike; every function takes the language ('en', 'zh', 'ru'; anything else is written as English), and
:mod:`rnnlab.i18n` passes the reader's.

- English: '-1.6e-07' in prose (as Python writes it), '1.6×10⁻⁷' on a chart's tick, '12.5%', '0.7.0-0.7.4'.
- Chinese: '−1.6×10⁻⁷', full-width brackets and colon inside a sentence（…）：, “quotes”, '12.5%'.
- Russian: '−1,6·10⁻⁷' (a decimal comma, U+2212 for minus, one exponent style in prose and ticks), a no-break space
  between thousands and before per cent ('12,5 %'), «quotes», an en dash in ranges ('0.7.0–0.7.4').
"""

from __future__ import annotations

import math
import re

MINUS = "\u2212"  # the minus sign (a hyphen is not one)
NBSP = "\u00a0"  # a no-break space
EN_DASH = "\u2013"  # between the ends of a range
_SUPERSCRIPT = str.maketrans("0123456789-+", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺")
_NUMBER = re.compile(r"^(?P<sign>[-+ ]?)(?P<mant>[0-9][0-9,]*(?:\.[0-9]*)?)(?:[eE](?P<exp>[-+]?[0-9]+))?"
                     r"(?P<rest>%?)$")
TRANSLATED = ("zh", "ru")


def power_sign(lang: str) -> str:
    """What joins a mantissa to its power of ten: '×' ('1.6×10⁻⁷'), '·' in Russian ('1,6·10⁻⁷')."""
    return "·" if lang == "ru" else "×"


def _powered(mant: str, exp: str, lang: str, bare_one: bool = True) -> str:
    power = "10" + str(int(exp)).translate(_SUPERSCRIPT)
    return power if bare_one and mant in ("1", "1.0", "1,0") else f"{mant}{power_sign(lang)}{power}"


def localize_number(written: str, lang: str) -> str:
    """A number Python wrote ('1,234.5', '-1.6e-07', '12.5%') as ``lang`` writes it in prose; English unchanged.

    Russian: a decimal comma, a no-break space between thousands and before '%', '−1,6·10⁻⁷'. Chinese:
    '−1.6×10⁻⁷'. Both write the minus sign, not a hyphen."""
    if lang not in TRANSLATED:
        return written
    match = _NUMBER.match(written.strip())
    if not match:
        return written
    sign, mant, exp, rest = match["sign"].strip(), match["mant"], match["exp"], match["rest"]
    if lang == "ru":
        mant = mant.replace(",", NBSP).replace(".", ",")
        rest = rest and NBSP + rest
    if exp is not None:
        mant = _powered(mant, exp, lang)
    return f"{MINUS if sign == '-' else sign}{mant}{rest}"


def tick_text(value: float, lang: str, digits: int = 3) -> str:
    """A chart's tick label for ``value``: a plain number within 10⁻³..10⁶ ('0.25', '1,500'; Russian '0,25',
    '1 500'), else one power of ten with its mantissa normalised ('2×10⁻⁹', never '0.2×10⁻⁸'; Russian '2·10⁻⁹'),
    the minus sign a minus in every language (as Plotly writes its own ticks)."""
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    size = abs(value)
    if 1e-3 <= size < 1e6:
        decimals = max(0, digits - 1 - math.floor(math.log10(size)))
        written = format(value, f",.{decimals}f")
        written = written.rstrip("0").rstrip(".") if "." in written else written
    else:
        written = format(value, f".{digits - 1}e")
    match = _NUMBER.match(written)
    if not match:
        return written
    mant, exp = match["mant"], match["exp"]
    if exp is not None:
        mant = mant.rstrip("0").rstrip(".") if "." in mant else mant
    if lang == "ru":
        mant = mant.replace(",", NBSP).replace(".", ",")
    text = _powered(mant, exp, lang, bare_one=False) if exp is not None else mant
    return f"{MINUS if match['sign'] == '-' else ''}{text}"


def number_range(low: str, high: str, lang: str) -> str:
    """'low-high' as ``lang`` writes a range: an en dash in Russian and Chinese ('0.7.0–0.7.4'), a hyphen in
    English."""
    return f"{low}{EN_DASH if lang in TRANSLATED else '-'}{high}"


def parenthesized(text: str, note: str, lang: str) -> str:
    """``text`` with ``note`` in brackets: 'loss (log scale)'; Chinese: full-width brackets without a space."""
    return f"{text}（{note}）" if lang == "zh" else f"{text} ({note})"


def labelled(label: str, value: str, lang: str) -> str:
    """'label: value'; Chinese: a full-width colon and no space ('A：GRU')."""
    return f"{label}：{value}" if lang == "zh" else f"{label}: {value}"


def quoted(text: str, lang: str) -> str:
    """``text`` quoted in running prose: '“text”' (English, Chinese), '«text»' (Russian)."""
    return f"«{text}»" if lang == "ru" else f"“{text}”"


def number_separator(lang: str) -> str:
    """Between the numbers of a list in a sentence or a table cell: ', ' (Russian: '; ',
    since a comma is its decimal mark; Chinese: '，' with a zero-width space after it, so that a narrow cell
    wraps there)."""
    if lang == "ru":
        return "; "
    if lang == "zh":
        return "，\u200b"
    return ", "


def times_sign(lang: str) -> str:
    """Between the factors of a product in words ('5 seeds x 4 learning rates'): ' x ' in English, ' × ' else."""
    return " x " if lang not in TRANSLATED else " × "
