"""Runs of lines read before word for word, made again from what reading them left (``blaslog/parse/_recall.py``),
give what reading every line gives: the same records on the same lines, counts, problems and warnings, on the
real corpus repeated, mutated the ways real logs are, read with every record wanted or GEMMs only, lazily or
built, in batches that cut it at other places each time."""

from __future__ import annotations

import pytest

from blaslog._fast import _c
from blaslog.formats import Sniffer
from blaslog.inputs import text_reader
from blaslog.parse import _accounting, _FileParser, built
from blaslog.parse._recall import Runs
from tests.test_negative_cache import MUTATIONS, _corpus


def _parse(text: str, events: bool, lazy: bool, block: int) -> tuple[list[dict], dict, Runs | None, str]:
    parser = _FileParser(text_reader(text, "x.log"), Sniffer(), "warn", events=events)
    parser.reader.block = block
    found = built(parser.items()) if lazy else parser.records()
    records = [record.to_dict() for record in found]
    lines = [(record["line"], record["end_line"]) for record in records]
    assert len(lines) == len(records)
    return records, parser.summary.to_dict(max_problems=10**6), parser.runs, repr(parser.other)


@pytest.fixture(scope="module")
def corpus() -> str:
    return _corpus() * 2


WAYS = [(mutation, True, True) for mutation in sorted(MUTATIONS)] + [
    (mutation, events, lazy) for mutation in ("plain", "all") for events, lazy in ((False, True), (True, False))
]


@pytest.mark.parametrize(("mutation", "events", "lazy"), WAYS)
def test_runs_made_again_give_what_reading_them_gives(corpus, mutation, events, lazy, monkeypatch):
    text = MUTATIONS[mutation](corpus)
    block = 1 << 15 if lazy else 1 << 17
    recalled = _parse(text, events, lazy, block)
    with monkeypatch.context() as patch:
        patch.setattr(_c, "shape_cache", False)  # every line read as it comes (and every record through the grammar)
        plain = _parse(text, events, lazy, block)
    assert plain[2] is None
    assert recalled[0] == plain[0]  # with their line numbers (records compare without them)
    assert recalled[1] == plain[1]
    assert recalled[3] == plain[3]
    runs = recalled[2]
    assert runs is not None and runs.recalled > 0


def test_problems_past_the_limit_are_counted_as_reading_gives_them(corpus, monkeypatch):
    """A log with more problems than are kept: the runs made again report theirs, counted past the limit."""
    monkeypatch.setattr(_accounting, "MAX_PROBLEMS", 20)
    recalled = _parse(corpus, False, True, 1 << 16)
    with monkeypatch.context() as patch:
        patch.setattr(_c, "shape_cache", False)
        plain = _parse(corpus, False, True, 1 << 16)
    assert recalled[1]["more_problems"] > 0
    assert recalled[0] == plain[0] and recalled[1] == plain[1]


def _sunk(text: str, block: int) -> tuple[tuple, dict, Runs | None]:
    """What a sink (the CompactRun that `summary`, `diff` and `check` read into) is handed, as reading gives it."""
    from blaslog.runs import CompactRun

    run = CompactRun("x.log")
    parser = _FileParser(text_reader(text, "x.log"), Sniffer(), "warn", events=False)
    parser.reader.block = block
    parser.sink = run
    run.extend(parser.records())
    state = (
        [(call.to_dict(), call.log_format) for call in run.calls],
        list(run.which),
        list(run.lines),
        list(run.thread_of),
        list(run.threads),
        run.overflow,
    )
    return state, parser.summary.to_dict(max_problems=10**6), parser.runs


@pytest.mark.parametrize("mutation", ["plain", "prints", "tags", "all"])
def test_runs_made_again_hand_a_sink_its_calls_in_order(corpus, mutation, monkeypatch):
    """Where a sink takes the GEMMs of uniform shapes, a run made again hands it the calls its reading handed it,
    moved to the run's lines, among the run's other records as a plain read hands them over: the CompactRun is
    the same call for call (its calls, which call each line is, in order, and on which thread)."""
    text = MUTATIONS[mutation](corpus * 2)  # four times: the second half's calls go to the sink from kept runs
    recalled = _sunk(text, 1 << 16)
    with monkeypatch.context() as patch:
        patch.setattr(_c, "shape_cache", False)
        plain = _sunk(text, 1 << 16)
    assert recalled[0] == plain[0]
    assert recalled[1] == plain[1]
    runs = recalled[2]
    assert runs is not None and runs.recalled > 0
    kept = [run for run in runs.kept.values() if run is not None]
    if mutation != "all":  # (with every mutation at once, the runs kept hand the sink nothing)
        assert any(run.calls for run in kept)
    if mutation == "plain":
        assert any(run.calls and run.items for run in kept)  # the order of calls among records is put to the test
    assert len(plain[0][1]) > 0  # calls were compared
