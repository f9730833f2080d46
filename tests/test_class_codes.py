"""A class code typed on a phone whose keyboard is Cyrillic, Greek or a Chinese input method's: letters that look like
the projected Latin ones are read as those letters, and nothing else is.

The look-alikes are checked against Unicode's own list, not the app's: the rows of confusables.txt (Unicode Technical
Standard #39, "Unicode Security Mechanisms") whose character is in the Greek and Coptic, Cyrillic or Cyrillic
Supplement block and whose prototype is one ASCII character, copied here as the standard writes them."""

from __future__ import annotations

import random

import pytest

from rnnlab.sharing.classes import CODE_ALPHABET, CODE_LENGTH, new_code, normal_code

# code point ; prototype (UTS #39 confusables.txt, blocks U+0370-U+052F, one-character ASCII prototypes)
CONFUSABLES = """
037F J; 0391 A; 0392 B; 0395 E; 0396 Z; 0397 H; 0399 l; 039A K; 039C M; 039D N; 039F O; 03A1 P; 03A4 T; 03A5 Y;
03A7 X; 03B1 a; 03B3 y; 03B9 i; 03BD v; 03BF o; 03C1 p; 03C3 o; 03C5 u; 03D2 Y; 03DC F; 03E8 2; 03F1 p; 03F2 c;
03F3 j; 03F9 C; 03FA M; 0405 S; 0406 l; 0408 J; 0410 A; 0412 B; 0415 E; 0417 3; 041A K; 041C M; 041D H; 041E O;
0420 P; 0421 C; 0422 T; 0423 Y; 0425 X; 042C b; 0430 a; 0431 6; 0433 r; 0435 e; 043E o; 0440 p; 0441 c; 0443 y;
0445 x; 0455 s; 0456 i; 0458 j; 0461 w; 0474 V; 0475 v; 04AE Y; 04AF y; 04BB h; 04BD e; 04C0 l; 04CF i; 04E0 3;
0501 d; 050C G; 051B q; 051C W; 051D w
"""
ROWS = [(chr(int(point, 16)), proto) for point, proto in
        (row.split() for row in CONFUSABLES.replace("\n", " ").split(";") if row.strip())]


def reads_as_the_projected(char: str, proto: str) -> bool:
    """Whether a student reading the projected code (capitals and digits) types ``char`` for one of its characters:
    it looks like a digit or a capital of the code, or, a small letter, like the small form of a capital of it."""
    if proto.upper() not in CODE_ALPHABET:
        return False
    return proto.isdigit() or proto.isupper() or (char.islower() and proto.islower())


LOOK_ALIKES = [(char, proto) for char, proto in ROWS if reads_as_the_projected(char, proto)]
OTHERS = [(char, proto) for char, proto in ROWS if not reads_as_the_projected(char, proto)]


def test_the_standard_s_rows_were_copied_whole():
    assert len(ROWS) == 75 and len(LOOK_ALIKES) == 63
    assert {char for char, _ in OTHERS} == set("ΙΟιοσІОЬоіӀӏ")  # an I, an O, or a small l for a capital


@pytest.mark.parametrize("char, proto", LOOK_ALIKES, ids=[f"U+{ord(c):04X}" for c, _ in LOOK_ALIKES])
def test_a_look_alike_is_read_as_the_letter_it_looks_like_in_every_place(char, proto):
    code = new_code()
    for place in range(CODE_LENGTH):
        real = code[:place] + proto.upper() + code[place + 1:]
        assert normal_code(real[:place] + char + real[place + 1:]) == real


@pytest.mark.parametrize("char, proto", OTHERS, ids=[f"U+{ord(c):04X}" for c, _ in OTHERS])
def test_a_character_that_looks_like_no_character_of_a_code_keeps_it_invalid(char, proto):
    assert normal_code("ABC23" + char) is None


CYRILLIC_AND_GREEK = [chr(c) for c in range(0x0391, 0x03CA)] + [chr(c) for c in range(0x0410, 0x0450)]


def test_every_other_russian_and_greek_letter_keeps_a_code_invalid():
    look_alike = {char for char, _ in LOOK_ALIKES}
    for char in CYRILLIC_AND_GREEK:
        small_twin = char.upper() != char and char.upper() in look_alike  # к, м, т, β: their capitals look alike
        if char in look_alike or small_twin or char.isspace():
            continue
        assert normal_code("ABC23" + char) is None, char


def test_a_projected_code_typed_on_a_russian_or_a_greek_keyboard():
    """In capitals on both; in small letters on a Russian one too (a Greek small nu and upsilon look like v and u,
    not like N and Y)."""
    twins = {"ru": dict(zip("ABCEHKMPTXY3", "АВСЕНКМРТХУЗ")), "el": dict(zip("ABEZHKMNPTXY", "ΑΒΕΖΗΚΜΝΡΤΧΥ"))}
    draw = random.Random(7)
    for lang, letters in twins.items():
        for _ in range(50):
            code = "".join(draw.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            typed = "".join(letters.get(c, c) for c in code)
            assert normal_code(typed) == code and normal_code(f"{typed[:3]} {typed[3:]}") == code
            assert lang != "ru" or normal_code(typed.lower()) == code


INPUT_METHOD = ["ＡＢＣ２３４", "ＡＢＣ　２３４", "ａｂｃ－２３４", "ABC–234", "ABC — 234", "ABC\u2212234"]


@pytest.mark.parametrize("typed", INPUT_METHOD)
def test_full_width_forms_and_dashes_of_an_input_method(typed):
    assert normal_code(typed) == "ABC234"
