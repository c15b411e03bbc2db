"""Progress reporting: a bar on a terminal, timed plain lines for a log, or nothing."""

from __future__ import annotations

import pytest

from softmax_dispersion.empirical.progress import Progress


def test_lines_say_where_a_stage_starts_and_ends() -> None:
    lines: list[str] = []
    progress = Progress("lines", log=lines.append, every=3600.0)
    assert list(progress.track(range(5), "train softmax", unit="steps")) == list(range(5))
    assert lines[0] == "train softmax: 0/5 steps"
    assert lines[-1].startswith("train softmax: 5/5 steps (")
    assert len(lines) == 2  # nothing in between within the interval


def test_lines_come_at_least_every_interval() -> None:
    lines: list[str] = []
    progress = Progress("lines", log=lines.append, every=0.0)
    list(progress.track(range(4), "evaluate"))
    assert len(lines) == 5


def test_off_is_silent_and_messages_follow_the_mode() -> None:
    lines: list[str] = []
    quiet = Progress("off", log=lines.append)
    list(quiet.track(range(3), "x"))
    quiet.message("hello")
    assert lines == []
    Progress("lines", log=lines.append).message("hello")
    assert lines == ["hello"]


def test_modes_from_flags() -> None:
    assert Progress.of(True).mode == "bar"
    assert Progress.of(False).mode == "off" and Progress.of(None).mode == "off"
    assert Progress.of("lines").mode == "lines"
    with pytest.raises(ValueError, match="bar, lines or off"):
        Progress("loud")  # type: ignore[arg-type]
