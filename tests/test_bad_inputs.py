"""The bad-input corpus (fixtures/bad): each file gets exactly the message in its .expected file.

`pytest --update-golden` rewrites the .expected files; review the diff.
"""

from __future__ import annotations

import os

import pytest

from blaslog.cli import cli
from tests.conftest import BAD

CASES = sorted(p for p in BAD.iterdir() if p.suffix not in (".expected", ".md"))


def test_corpus_is_there():
    assert len(CASES) >= 15


def _run(runner, *args: str) -> str:
    cwd = os.getcwd()
    os.chdir(BAD)  # messages name the file as given: keep them relative
    try:
        result = runner.invoke(cli, list(args))
    finally:
        os.chdir(cwd)
    assert "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return f"exit: {result.exit_code}\n{result.stderr}"


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_message_is_exactly_the_expected_one(case, runner, update_golden):
    got = _run(runner, "parse", case.name, "-f", "json")
    expected_file = case.with_name(case.name + ".expected")
    if update_golden:
        expected_file.write_text(got)
    assert got == expected_file.read_text()


@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_strict_stops_with_exit_2_on_errors(case, runner):
    got = _run(runner, "parse", "--strict", case.name, "-f", "json", "-q")
    normal = case.with_name(case.name + ".expected").read_text()
    has_error = ": error:" in normal
    assert got.startswith("exit: 2") == has_error or "no BLAS log records" in normal


def test_directory_without_logs(runner, tmp_path):
    (tmp_path / "notes.txt").write_text("step 1 loss=4.2\n")
    result = runner.invoke(cli, ["parse", str(tmp_path)])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(
        f"{tmp_path}: a folder, but no BLAS log was found under it (searched every file below it for "
        "cuBLASLt, cuBLAS, rocBLAS or hipBLASLt lines, TunableOp results files and hipBLASLt tuning files)"
    )


def test_unreadable_file(runner, tmp_path, monkeypatch):
    path = tmp_path / "locked.log"
    path.write_text("x\n")
    real_open = open

    def deny(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", deny)
    result = runner.invoke(cli, ["parse", str(path)])
    assert result.exit_code == 2
    assert f"{path}: permission denied; check the file's read permission" in result.stderr


def test_missing_file_among_good_ones_goes_on(runner):
    from tests.conftest import SEED

    result = runner.invoke(cli, ["parse", str(SEED / "sharded.log"), "nope.log", "-f", "json", "-q"])
    assert result.exit_code == 2
    assert "nope.log: no such file" in result.stderr
    assert '"k": 8' in result.stdout


def test_every_corpus_file_balances():
    import blaslog

    for case in CASES:
        for summary in blaslog.parse(str(case)).files:
            assert summary.balanced(), case.name


def test_deeply_nested_groups_are_an_error_not_a_crash(runner, tmp_path):
    path = tmp_path / "deep.log"
    path.write_text(
        "[2024-01-01 00:00:00][cublasLt][1][Api][f] " + "a=[" * 3000 + "x=1" + "]" * 3000 + "\n"
        "[2024-01-01 00:00:00][cublasLt][1][Api][f] b=1\n"
    )
    result = runner.invoke(cli, ["parse", str(path), "--kind", "all", "-f", "json", "-q"])
    assert result.exit_code == 0 and "Traceback" not in result.stderr
    assert "nested too deeply" in result.stderr


@pytest.mark.parametrize("block", [1 << 19, 1 << 18, 333_333, 1 << 20])
def test_an_overlong_line_is_as_long_as_it_is_wherever_the_blocks_fall(block, tmp_path):
    """A line over MAX_LINE is skipped in pieces of blocks; its reported length is its own (without its line
    end), whether its end fell in a block of its own or with the next lines (a piece of a big input starts its
    blocks elsewhere, and said another length)."""
    from blaslog.inputs import MAX_LINE, Reader

    for extra in (1, 7, 300_001):
        path = tmp_path / "long.log"
        length = MAX_LINE + extra
        path.write_bytes(b"first line\n" + b"x" * length + b"\nlast line\n")
        reader = Reader(str(path), block=block)
        problems = [p for batch in reader.batches() for p in batch.problems.values()]
        assert [message for message, _ in problems] == [
            f"line of {length} bytes is too long for a BLAS log line; skipped"
        ], (block, extra)
