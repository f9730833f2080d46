"""The command line: train writes a history, grad prints the decay table, bad options give messages."""

import json
from dataclasses import fields

import pandas as pd

from rnnlab import true_sizes
from rnnlab.cli import build_parser, main
from rnnlab.config import Config


def test_help_lists_every_option_with_its_default(capsys):
    parser = build_parser()
    train_help = " ".join(parser._subparsers._group_actions[0].choices["train"].format_help().split())
    for f in fields(Config):
        assert f"--{f.name.replace('_', '-')}" in train_help
    assert "(default: adding)" in train_help and "(default: 0.01)" in train_help


def test_train_writes_csv_and_json(tmp_path, capsys):
    out = tmp_path / "h.csv"
    assert main(["train", "--seq-len", "10", "--batch", "8", "--features", "8", "--steps", "12", "--chunk", "5",
                 "--out", str(out), "--quiet"]) == 0
    df = pd.read_csv(out)
    assert list(df["step"]) == list(range(1, 13))
    assert "final loss" in capsys.readouterr().out
    out_json = tmp_path / "h.json"
    assert main(["train", "--task", "sine", "--seq-len", "10", "--batch", "8", "--features", "8",
                 "--steps", "5", "--chunk", "5", "--out", str(out_json), "--quiet"]) == 0
    data = json.loads(out_json.read_text())
    assert data["config"]["task"] == "sine" and len(data["steps"]) == 5 and data["stop_reason"] is None


def test_train_reports_divergence_with_exit_code(tmp_path, capsys):
    code = main(["train", "--seq-len", "10", "--batch", "8", "--features", "8", "--steps", "50", "--chunk", "10",
                 "--lr", "1e6", "--clip", "0", "--optimizer", "sgd", "--out", str(tmp_path / "h.csv"), "--quiet"])
    assert code == 1
    assert "lower the learning rate" in capsys.readouterr().out


def test_bad_configuration_exits_2_with_message(capsys):
    assert main(["train", "--cell", "conv_lstm", "--quiet"]) == 2
    assert "needs a spatial task" in capsys.readouterr().err
    assert main(["grad", "--cells", "gru,nope"]) == 2
    assert "Unknown cell: nope" in capsys.readouterr().err
    assert main(["grad", "--lengths", "5,x"]) == 2
    assert "--lengths must be whole numbers" in capsys.readouterr().err


def test_grad_prints_table_and_fit(capsys):
    assert main(["grad", "--cells", "simple,gru", "--lengths", "4,8", "--features", "8", "--batch", "8"]) == 0
    out = capsys.readouterr().out
    assert "||dL/dh_0||" in out
    assert "simple" in out and "gru" in out
    assert out.count("per step: the gradient") == 2


def test_grad_prints_true_sizes_below_float32_and_fits_them(capsys):
    """The LSTM's gradient at T = 200 is about 4e-23, a float32 number; at T = 600 it is below float32's range
    and printed at its true size (the log-scaled probe's format_log10 of its log10), and the fit uses it."""
    from rnnlab.config import Config
    from rnnlab.probing import probes

    assert main(["grad", "--cells", "lstm", "--lengths", "50,200,600"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split(None, 1)[1].strip() for line in out.splitlines()
            if line.split() and line.split()[0] in ("50", "200", "600")}
    sweep = probes.decay_sweep(Config(), ["lstm"], [50, 200, 600])
    assert [rows[str(T)] for T in (50, 200, 600)] == [true_sizes.format_log10(v) for v in sweep["log10"]]
    assert 1e-24 < float(rows["200"]) < 1e-21 and -70 < sweep["log10"].iloc[2] < true_sizes.F32_LOG10_FLOOR
    assert "(1 of these is below float32's smallest normal number, 1.2e-38" in out
    rate = probes.fit_decay(sweep)["rate_per_step"].iloc[0]
    assert f"lstm: ×{rate:.3g} per step: the gradient halves every" in out and 0.7 < rate < 0.85


def test_lang_chooses_the_language_of_the_messages_and_the_help(tmp_path, capsys):
    from rnnlab.i18n import language

    assert main(["train", "--cell", "conv_lstm", "--quiet", "--lang", "ru"]) == 2
    assert capsys.readouterr().err.startswith("ошибка: ConvLSTM не может решать задачу «Сложение»")
    assert main(["--lang", "zh", "grad", "--cells", "gru,nope"]) == 2
    assert "错误：未知的单元：nope；可选：" in capsys.readouterr().err
    assert main(["grad", "--cells", "gru,nope", "--lang", "en"]) == 2
    assert "error: Unknown cell: nope" in capsys.readouterr().err
    assert language() == "en"  # the command's language ends with it
    out = tmp_path / "h.csv"
    assert main(["train", "--seq-len", "10", "--batch", "8", "--features", "8", "--steps", "12", "--chunk", "5",
                 "--out", str(out), "--quiet", "--lang", "ru"]) == 0
    assert "12 шагов; итоговые потери" in capsys.readouterr().out
    assert list(pd.read_csv(out).columns)[:2] == ["step", "loss"]  # the file stays as it is


def test_the_help_in_russian(capsys):
    from rnnlab.i18n import using

    with using("ru"):
        parser = build_parser()
    train_help = " ".join(parser._subparsers._group_actions[0].choices["train"].format_help().split())
    assert "насколько сильно каждый шаг оптимизатора сдвигает веса (default: 0.01)" in train_help
    assert "--lang {en,zh,ru}" in train_help
