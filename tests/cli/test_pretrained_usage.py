"""``experiment pretrained`` without its extra, and with bad input: one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from softmax_dispersion.cli import _pretrained, main


def test_without_the_extra_one_line_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(_pretrained, "missing_for_pretrained", lambda: ["transformers"])
    assert main(["experiment", "pretrained", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert 'pip install ".[pretrained]"' in err and "missing: transformers" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--sizes", "16,8"], "--sizes must be strictly increasing"),
        (["--sizes", "8,1024"], "--sizes must lie in 3..512"),
        (["--sizes", "x"], "--sizes: 'x' is not a number"),
        (["--search-rounds", "-1"], "--search-rounds must be >= 0"),
        (["--text", "/nonexistent/file"], "--text: /nonexistent/file is not a file"),
    ],
)
def test_bad_input_names_the_option(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    if _pretrained.missing_for_pretrained():
        pytest.skip("the options are read after the extra is found")
    assert main(["experiment", "pretrained", *argv, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
