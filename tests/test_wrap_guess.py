"""Pieces of a wrapped log read with a guess of the width (`-j N`, `--scheduler`): each piece's reader guesses the
width its lines are cut at from the bytes before it, and a piece whose guess the piece before it proves wrong is
read again. The guess right or wrong, the JSON is the one read's, byte for byte; a right guess reads no piece twice.

The logs: the cuBLASLt log of the generated fixtures (long lines), wrapped as a terminal would in part of it only,
or at two widths. Where a guess is wrong is forced by how many bytes before a piece are read for it
(`PROBE_BYTES`: 0 reads none, so every piece after the width was seen is misread)."""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import blaslog._parallel as parallel
from blaslog.cli import cli
from tests.conftest import GENERATED

JOBS = 3
"""Pieces of the pool's reading."""
PARSE = ["parse", "-f", "json", "--kind", "all"]
SUMMARY = ["summary", "-f", "json"]


def _wrap(lines: list[str], width: int) -> list[str]:
    """`lines` as a terminal `width` columns wide shows them (every line cut at the width)."""
    return [line[i : i + width] for line in lines for i in range(0, max(len(line), 1), width)] if width else lines


def _log(*parts: tuple[float, int]) -> Callable[[list[str]], str]:
    """A log of consecutive parts: (share of the lines, width they are cut at; 0: not cut)."""

    def make(lines: list[str]) -> str:
        out, at = [], 0
        for share, width in parts:
            end = at + round(len(lines) * share)
            out += _wrap(lines[at:end], width)
            at = end
        return "".join(line + "\n" for line in out)

    return make


LOGS = {
    "wrapped-throughout-100": _log((1.0, 100)),
    "head-plain-then-wrapped-120": _log((0.45, 0), (0.55, 120)),
    "two-widths-100-then-144": _log((0.5, 100), (0.5, 144)),
    "wrapped-in-second-piece-only-120": _log((0.36, 0), (0.22, 120), (0.42, 0)),
}
PROBES = {"probe-default": parallel.PROBE_BYTES, "probe-4k": 4096, "probe-none": 0}


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[str, Path]:
    lines = (GENERATED / "lt_fp32_unsharded.stdout.log").read_text().splitlines()
    folder = tmp_path_factory.mktemp("wrapguess")
    out = {}
    for name, make in LOGS.items():
        out[name] = folder / f"{name}.log"
        out[name].write_text(make(lines))
    return out


@pytest.fixture(scope="module")
def dask_local():
    """`--scheduler local`'s LocalCluster (made by the first command that asks for it), closed at the end."""
    pytest.importorskip(
        "distributed", reason="Dask's distributed scheduler is not installed: pip install 'blaslog[dask]'"
    )
    from blaslog import cluster

    yield cluster
    cluster.close()


def _invoke(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, args)
    return result.exit_code, result.stdout, result.stderr


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[parallel.Piece]:
    """The pieces the command's piece driver (parallel.PieceReads over its process pool) reads but the first,
    which this process reads as it goes: first readings, each with a guess (a `probe_from`: see parallel.guessed),
    and the pieces read again (no `probe_from`: the width the reading of the piece before ended with)."""
    handed: list[parallel.Piece] = []
    real = parallel.pool_submit

    def pool_submit(pool: Any) -> Any:
        submit = real(pool)

        def counted(fn: Any, *args: Any, here: bool = False) -> Any:
            if fn is parallel.read_piece:
                handed.append(args[0])
            elif fn is parallel._settled:  # the check of a reading: the piece is read again with another width
                read, piece, width, _job = (arg.result() if isinstance(arg, Future) else arg for arg in args)
                if read.read_with != width:
                    handed.append(piece.at_width(width))
            return submit(fn, *args, here=here)

        return counted

    monkeypatch.setattr(parallel, "pool_submit", pool_submit)  # (blaslog.stream imports it from there when it cuts)
    return handed


def _again(handed: list[parallel.Piece]) -> list[parallel.Piece]:
    return [piece for piece in handed if piece.probe_from < 0]


@pytest.mark.parametrize("probe", list(PROBES))
@pytest.mark.parametrize("case", list(LOGS))
def test_pieces_read_with_a_right_or_wrong_guess_give_the_json_of_one_read(case, probe, logs, monkeypatch):
    path = str(logs[case])
    one = _invoke([*PARSE, path, "-j", "1"])
    assert one[0] in (0, 1), one
    assert len(json.loads(one[1])["records"]) > 0
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)  # cut however small
    monkeypatch.setattr(parallel, "PROBE_BYTES", PROBES[probe])
    handed = _counted(monkeypatch)
    assert _invoke([*PARSE, path, "-j", str(JOBS)]) == one
    assert len(handed) >= JOBS - 1
    if probe == "probe-none":  # no guess: every piece after the width was first seen is read again
        assert _again(handed)
        assert {piece.wrap_width for piece in _again(handed)} <= {100, 120, 144}


@pytest.mark.parametrize("case", list(LOGS))
def test_the_runs_of_pieces_read_with_a_wrong_guess_are_the_runs_of_one_read(case, logs, monkeypatch):
    path = str(logs[case])
    one = _invoke([*SUMMARY, path, "-j", "1"])
    assert one[0] in (0, 1), one
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    monkeypatch.setattr(parallel, "PROBE_BYTES", 0)
    handed = _counted(monkeypatch)
    assert _invoke([*SUMMARY, path, "-j", str(JOBS)]) == one
    assert _again(handed)


@pytest.mark.parametrize("probe", ["probe-default", "probe-none"])
@pytest.mark.parametrize("case", list(LOGS))
def test_pieces_read_by_dask_with_a_right_or_wrong_guess_give_the_json_of_one_read(
    case, probe, logs, dask_local, monkeypatch
):
    path = str(logs[case])
    for command in (PARSE, SUMMARY):
        one = _invoke([*command, path, "-j", "1"])
        assert one[0] in (0, 1), one
        monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
        monkeypatch.setattr(parallel, "PROBE_BYTES", PROBES[probe])
        monkeypatch.setattr(dask_local, "PIECE_BYTES", max(logs[case].stat().st_size // 4, 1))
        assert len(dask_local.plan([path], threads=2)[0].pieces) >= 4  # really cut
        assert _invoke([*command, path, "--scheduler", "local", "-j", "2"]) == one
        monkeypatch.undo()


def test_a_right_guess_reads_no_piece_twice(logs, monkeypatch):
    """The log is wrapped throughout: each piece's reader sees the width before its piece, and no piece is read
    again; without the guess, every piece but the first is (the count is not vacuous)."""
    path = str(logs["wrapped-throughout-100"])
    one = _invoke([*PARSE, path, "-j", "1"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    handed = _counted(monkeypatch)
    assert _invoke([*PARSE, path, "-j", str(JOBS)]) == one
    assert len(handed) == JOBS - 1 and _again(handed) == []
    handed.clear()
    monkeypatch.setattr(parallel, "PROBE_BYTES", 0)
    assert _invoke([*PARSE, path, "-j", str(JOBS)]) == one
    assert [piece.wrap_width for piece in _again(handed)] == [100] * (JOBS - 1)


def test_a_width_seen_only_in_the_second_piece_is_the_third_pieces_though_its_guess_saw_none(logs, monkeypatch):
    """The second piece holds the log's only wrapped lines, and its end is not wrapped: the reader of the few
    bytes before the third piece sees no width, and the third piece, read without one, is read again with the
    width the second ended with (one reader of the whole log keeps the width it saw)."""
    path = str(logs["wrapped-in-second-piece-only-120"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    monkeypatch.setattr(parallel, "PROBE_BYTES", 4096)
    pieces = parallel.guessed(parallel.cut(path, JOBS))
    reads = [parallel.read_piece(piece, parallel.run_of) for piece in pieces]
    assert [read.read_with for read in reads] == [0, 0, 0]
    assert [read.wrap_width for read in reads] == [0, 120, 0]
    assert parallel.misread(reads) == [2]
    one = _invoke([*SUMMARY, path, "-j", "1"])
    handed = _counted(monkeypatch)
    assert _invoke([*SUMMARY, path, "-j", str(JOBS)]) == one
    assert [(piece.start, piece.wrap_width) for piece in _again(handed)] == [(pieces[2].start, 120)]


def test_one_piece_driver_reads_for_the_pool_and_for_dask(logs, dask_local, monkeypatch):
    """`parse -j N`, `summary -j N` and `--scheduler local` read the pieces of one input through the same driver
    (parallel.PieceReads): the rule of the wrap width is written once, not once per scheduler."""
    path = str(logs["wrapped-throughout-100"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    monkeypatch.setattr(dask_local, "PIECE_BYTES", max(logs["wrapped-throughout-100"].stat().st_size // 4, 1))
    driven: list[int] = []

    class Counted(parallel.PieceReads):  # type: ignore[type-arg]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            driven.append(len(self.pieces))

    monkeypatch.setattr(parallel, "PieceReads", Counted)
    for args in ([*PARSE, path, "-j", str(JOBS)], [*SUMMARY, path, "-j", str(JOBS)]):
        driven.clear()
        assert _invoke(args)[0] in (0, 1)
        assert driven and driven[0] >= 2, args
    driven.clear()
    assert _invoke([*PARSE, path, "--scheduler", "local", "-j", "2"])[0] in (0, 1)
    assert driven and driven[0] >= 4
