"""The README's Python examples run and print what the README says, and the README,
docs/install.md and the command line agree."""

from __future__ import annotations

import doctest
import re
import shlex
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_examples() -> None:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner()
    for number, block in enumerate(blocks):
        runner.run(parser.get_doctest(block, {}, f"README block {number}", str(README), 0))
    assert runner.summarize(verbose=False).failed == 0


# --------------------------------------------------------------------------------------
# The README, docs/install.md and the command line agree.

INSTALL_PAGE = README.parent / "docs" / "install.md"
PYPROJECT = README.parent / "pyproject.toml"
SET_UP = re.compile(r"pip install|pytest|sphinx-build")
"""The console lines that set up, test or build: the same in both files."""


def _console_lines(path: Path) -> list[str]:
    """The commands of the page's console blocks (``$ ...``)."""
    return re.findall(r"^\$ (.+)$", path.read_text(), re.M)


def _cli_invocations(path: Path) -> list[str]:
    """Every ``softmax-dispersion ...`` command the page shows, in console lines and in
    inline code, each part of an ``&&`` chain on its own."""
    text = path.read_text()
    candidates = _console_lines(path) + re.findall(r"`(softmax-dispersion [^`]+)`", text)
    parts = (part.strip() for line in candidates for part in line.split("&&"))
    return sorted({part for part in parts if part.startswith("softmax-dispersion ")})


def test_the_install_page_gives_the_readmes_commands() -> None:
    readme = {line for line in _console_lines(README) if SET_UP.search(line)}
    install = {line for line in _console_lines(INSTALL_PAGE) if SET_UP.search(line)}
    assert readme == install
    assert any(line.endswith("python -m pytest -n auto") for line in readme)


@pytest.mark.parametrize("page", [README, INSTALL_PAGE], ids=lambda page: page.name)
def test_every_documented_command_parses(page: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from softmax_dispersion.cli import build_parser

    parser = build_parser()
    invocations = _cli_invocations(page)
    assert invocations
    for invocation in invocations:
        try:
            parser.parse_args(shlex.split(invocation)[1:])
        except SystemExit:
            pytest.fail(f"{page.name}: {invocation!r} does not parse: {capsys.readouterr().err}")


def test_the_command_check_can_fail(capsys: pytest.CaptureFixture[str]) -> None:
    """A command the parser no longer takes is caught (a renamed option)."""
    from softmax_dispersion.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["prove", "T4", "--evaluate-at", "theta=1"])
    assert "unrecognized arguments" in capsys.readouterr().err


def _extras() -> dict[str, list[str]]:
    """Each extra of pyproject.toml with the distributions (and extras) it names."""
    tomllib = pytest.importorskip("tomllib")
    extras = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    named: dict[str, list[str]] = {}
    for extra, requirements in extras.items():
        names = []
        for requirement in requirements:
            name = re.match(r"[A-Za-z0-9._-]+(\[[^\]]+\])?", requirement)
            assert name is not None
            if name.group(1):  # softmax-dispersion[docs]: another extra
                names += [f"`{inner.strip()}`" for inner in name.group(1)[1:-1].split(",")]
            else:
                names.append(name.group(0).lower())
        named[extra] = names
    return named


def test_the_install_page_lists_every_extra_with_what_it_installs() -> None:
    rows = dict(re.findall(r"^\| `([a-z]+)` \| (.+) \|$", INSTALL_PAGE.read_text(), re.M))
    extras = _extras()
    assert set(rows) == set(extras)
    for extra, names in extras.items():
        row = rows[extra].lower()
        missing = [name for name in names if name.strip("`") not in row]
        assert not missing, f"the {extra!r} row does not name {missing}"


# --------------------------------------------------------------------------------------
# The README's report blocks are what `report` prints for the committed runs.


@pytest.mark.slow  # re-renders every figure of the run: about 15 s of CPU each
@pytest.mark.parametrize("run", ["docs/empirical-run", "docs/pretrained-run"])
def test_the_readmes_report_output_is_the_committed_runs(
    run: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Re-rendered from a copy of the run folder (``report`` rewrites its files), from a
    folder laid out as the repository, so that the paths it prints are the README's."""
    import shutil

    from softmax_dispersion.cli import main

    pytest.importorskip("matplotlib")
    shutil.copytree(README.parent / run, tmp_path / run)
    monkeypatch.chdir(tmp_path)
    assert main(["report", run]) == 0
    printed = capsys.readouterr().out
    command = f"$ softmax-dispersion report {run}\n"
    text = README.read_text()
    start = text.index(command) + len(command)
    shown = text[start : text.index("```", start)]
    assert shown == printed
