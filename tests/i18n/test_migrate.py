"""The migration checker's report in every language: each finding, note and refusal goes through the catalog as a
whole message, code stays as written, and a report built once (cached for every reader) reads in the language of
whoever looks at it."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from rnnlab.flaxapi import migrate
from rnnlab.flaxapi.migrate import RULES, check, decode_upload, rewrite
from rnnlab.i18n import NBSP, PSEUDO, using
from rnnlab.text import escape_markdown
from tests.i18n.pseudo import english_left, open_pseudo

CORPUS = Path(__file__).resolve().parents[1] / "flaxapi" / "corpus"
# Between them every rule the corpus meets: cells without features, nn.RNN's old size, jax.tree_map, old calls on
# the class and on an instance, a ConvLSTM, cell_size= and a custom RNNCellBase.
SNIPPETS = ["flax_rnn_reverse", "flax_cell_lstm", "flax_cell_convlstm", "flax_rnn_spatial", "flax_seq2seq_example"]
HEADER = "import flax.linen as nn\nimport jax\nimport jax.numpy as jnp\nimport numpy as np\n"
MORE = HEADER + (  # the rules the corpus does not meet
    "from flax.linen import ConvLSTM\n"
    "\n"
    "class M(nn.Module):\n"
    "    batch_size: int = 4\n"
    "\n"
    "    @nn.compact\n"
    "    def __call__(self, xs, key, carry):\n"
    "        c1 = nn.GRUCell.initialize_carry((), (), 8, init_fn=lambda k, s: jnp.zeros(s))\n"
    "        c2 = nn.GRUCell(8).initialize_carry(key, (2, 3), init_fn=lambda k: 0)\n"
    "        c3 = nn.GRUCell(8).initialize_carry(key, jnp.ones((2, 3)))\n"
    "        conv = ConvLSTM(4, (3, 3))\n"
    "        h0 = self.param('h0', nn.initializers.zeros, (self.batch_size, 16))\n"
    "        for x in xs:\n"
    "            carry, y = nn.GRUCell()(carry, x)\n"
    "        for x in np.moveaxis(xs, 0, -1):\n"
    "            pass\n"
    "        return carry\n"
)
CODE_SPAN = re.compile(r"`[^`]*`")
NUMBER = re.compile(r"\d+(?:\.\d+)*")


def sources() -> dict[str, str]:
    found = {name: (CORPUS / f"{name}.py").read_text() for name in SNIPPETS}
    return {**found, "example": migrate.EXAMPLE, "more": MORE}


@pytest.fixture(scope="module")
def reports() -> dict[str, tuple[migrate.CheckResult, migrate.RewriteResult]]:
    """Each source checked and rewritten once, in English (as the page's cache keeps them for every reader)."""
    return {name: (check(text), rewrite(text)) for name, text in sources().items()}


def sentences(result: migrate.CheckResult, rewritten: migrate.RewriteResult) -> list:
    """Every sentence of a report a reader sees (kept messages): findings, their rules' titles, the rewrite's notes,
    problems."""
    return ([f.message for f in result.findings] + [RULES[f.rule] for f in result.findings]
            + [c.note for c in rewritten.changes] + [f.message for f in rewritten.remaining]
            + [p.message for p in result.problems + rewritten.problems])


def test_the_sources_cover_every_rule(reports):
    assert {f.rule for result, _ in reports.values() for f in result.findings} == set(RULES)
    assert all(str(c.note) for _, rewritten in reports.values() for c in rewritten.changes)


def test_every_finding_goes_through_the_catalog(reports, monkeypatch):
    monkeypatch.setenv("RNNLAB_PSEUDO_LANGUAGE", "1")
    for name, (result, rewritten) in reports.items():
        assert result.findings, name
        english = [(f.line, f.code) for f in result.findings]
        with using(PSEUDO):
            for sentence in sentences(result, rewritten):
                shown = str(sentence)
                assert shown.startswith("⟦") and english_left(shown) == [], (name, shown)
                assert english_left(f"{sentence}") == [] and english_left(escape_markdown(str(sentence))) == []
            assert [(f.line, f.code) for f in result.findings] == english  # the code is shown as pasted
        for finding in result.findings:  # the pseudo-language's brackets around the English, nothing else
            with using(PSEUDO):
                shown = str(finding.message)
            assert shown.replace("⟦", "").replace("⟧", "") == str(finding.message), shown


@pytest.mark.parametrize("lang,script", [("zh", re.compile(r"[\u4e00-\u9fff]")), ("ru", re.compile(r"[а-яё]"))])
def test_every_finding_reads_in_chinese_and_russian_with_its_code_and_numbers(reports, lang, script):
    for name, (result, rewritten) in reports.items():
        for sentence in sentences(result, rewritten):
            english = str(sentence)
            with using(lang):
                shown = str(sentence)
            assert shown != english and script.search(shown), (name, lang, shown)
            for span in CODE_SPAN.findall(english):  # code stays code
                assert span in shown, (name, lang, span, shown)
            assert set(NUMBER.findall(english)) <= set(NUMBER.findall(shown)), (name, lang, shown)
            assert shown.count("`") == english.count("`")


def test_python_and_flax_errors_are_quoted_as_they_are():
    result = check(HEADER + "c = nn.LSTMCell.initialize_carry(key, (2,), 4)\n")
    (finding,) = result.findings
    error = re.search(r"today: (.*?)\)\. Build", str(finding.message)).group(1)  # the installed Flax's own words
    for lang in ("zh", "ru"):
        with using(lang):
            assert error in str(finding.message)
    broken = check("def f(:\n    pass\n")
    for lang in ("zh", "ru"):
        with using(lang):
            shown = str(broken.problems[0].message)
        assert "invalid syntax" in shown and "`def f(:`" in shown and "1" in shown


def test_a_report_built_in_one_language_reads_in_every_language():
    with using("zh"):  # a Chinese reader's run fills the shared cache
        built = check(migrate.EXAMPLE)
    fresh = check(migrate.EXAMPLE)
    assert built == fresh and [str(f.message) for f in built.findings] == [str(f.message) for f in fresh.findings]
    kept = pickle.loads(pickle.dumps(built))  # st.cache_data hands out a copy
    assert kept == fresh and type(kept.findings[0].message) is type(fresh.findings[0].message)
    for lang in ("en", "zh", "ru"):
        with using(lang):
            assert [str(f.message) for f in kept.findings] == [str(f.message) for f in fresh.findings]
            assert [f"{RULES[f.rule]}" for f in kept.findings] == [str(RULES[f.rule]) for f in fresh.findings]
    with using("ru"):
        assert re.search("[а-я]", f"{kept.findings[0].message}") and kept.findings[0].rule in RULES


def test_refusals_read_in_every_language_with_numbers_the_readers_way():
    too_long = "x = 1\n" * (migrate.MAX_CHARS // 6 + 1)
    (problem,) = check(too_long).problems
    assert "200,000 characters" in str(problem.message)  # English as it was
    with using("ru"):
        assert f"200{NBSP}000" in str(problem.message) and "строк" in str(problem.message)
    with using("zh"):
        assert "200,000" in str(problem.message) and "字符" in str(problem.message)
    text, error = decode_upload("notes.pdf", b"%PDF")
    assert text is None and str(error).startswith("notes.pdf: only .py, .txt, .md files")
    with using("ru"):
        assert str(error).startswith("notes.pdf: проверить можно только файлы .py, .txt, .md")
    text, error = decode_upload("long.py", too_long.encode())
    with using("zh"):
        assert str(error).startswith("long.py：") and "200,000" in str(error) and "未加载" in str(error)
    for lang in ("zh", "ru"):
        with using(lang):
            assert english_left(str(check("").problems[0].message)) == []
            assert "Python" in str(check("just some words here").problems[0].message)


def test_counted_words_take_the_russian_forms():
    for n, word in ((1, "1 аргумент:"), (2, "2 аргумента:")):
        args = ", ".join(["k", "s"][:n])
        finding = next(f for f in check(HEADER + f"c = cell.initialize_carry(key, (2,), init_fn=lambda {args}: 0)\n")
                       .findings if f.rule == "init-fn")
        assert f"takes {n} argument{'' if n == 1 else 's'}" in str(finding.message)
        with using("ru"):
            assert word in str(finding.message)


def test_the_page_shows_the_cached_report_in_the_readers_language(monkeypatch):
    """app_pages/api.py keeps the report in ``st.cache_data`` for every reader and shows its fields as they are."""
    at = open_pseudo("api", monkeypatch)
    shown = [str(e.value) for e in [*at.markdown, *at.caption, *at.warning, *at.info]]
    with using(PSEUDO):
        result, rewritten = check(migrate.EXAMPLE), rewrite(migrate.EXAMPLE)
        wanted = [str(f.message) for f in result.findings] + [str(c.note) for c in rewritten.changes]
    missing = [w for w in wanted if not any(w in s for s in shown)]
    assert wanted and missing == []
