"""The command is a thin client of the library: for every bundled fixture and every command, the library call's
JSON is the command's ``--format json`` output, byte for byte (and an input the command refuses with exit 2 is
one the library refuses with the same message)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from blaslog import api
from blaslog.api import _parse as api_parse
from blaslog.cli import cli
from blaslog.errors import BlaslogError
from blaslog.reporters import get_reporter

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
_NOT_LOGS = (".md", ".json", ".expected", ".jsonl")
LOGS = sorted(p for p in FIXTURES.rglob("*") if p.is_file() and not p.name.endswith(_NOT_LOGS))
GENERATED = FIXTURES / "generated"
SEED = FIXTURES / "seed"

PAIRS = [
    (SEED / "sharded.log", SEED / "unsharded.log", SEED / "caps.json"),
    (SEED / "unsharded_ffn256.log", SEED / "unsharded.log", None),
    (GENERATED / "lt_fp32_tp4" / "*.log", GENERATED / "lt_fp32_unsharded.stdout.log", GENERATED / "caps.json"),
    (GENERATED / "lt_fp32_tp4", GENERATED / "lt_fp32_unsharded.stdout.log", None),
    (GENERATED / "lt_fp16_tp4_rank0.log", GENERATED / "lt_fp16_unsharded.log.gz", GENERATED / "caps.json"),
    (GENERATED / "hipblaslt_bf16_tp2_rank0.api.log", GENERATED / "hipblaslt_bf16_unsharded.api.log", None),
    (GENERATED / "hipblaslt_bf16_tp2_rank0.bench.log", GENERATED / "hipblaslt_bf16_unsharded.bench.log", None),
]


def _json(report) -> str:
    return get_reporter("json").render(report)


def _same(args: list[str], call) -> None:
    result = CliRunner().invoke(cli, [*args, "-f", "json", "-q"])
    try:
        expected = _json(call())
    except BlaslogError as exc:
        assert result.exit_code == 2, result.output
        assert str(exc).splitlines()[0][:60] in result.stderr.replace("\n", " ")
        return
    assert result.exit_code in (0, 1, 2), result.output
    assert result.stdout == expected


def test_every_fixture_is_covered():
    assert len(LOGS) >= 40
    assert {p.parent.name for p in LOGS} >= {"seed", "generated", "nvidia-lib", "bad"}


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_parse_summary_check(log):
    _same(["parse", str(log)], lambda: api_parse.parse_report([str(log)]))
    _same(["summary", str(log)], lambda: api.summary([str(log)]))
    _same(["check", str(log)], lambda: api.check([str(log)]))


@pytest.mark.parametrize("sharded,unsharded,caps", PAIRS, ids=lambda p: getattr(p, "name", str(p)))
def test_diff(sharded, unsharded, caps):
    args = ["diff", str(sharded), str(unsharded)] + (["--caps", str(caps)] if caps else [])
    _same(args, lambda: api.diff(str(sharded), str(unsharded), caps=str(caps) if caps else None))


def test_diff_several_runs_against_one_reference():
    runs = [str(SEED / "sharded.log"), str(SEED / "unsharded_ffn256.log")]
    reference = str(SEED / "unsharded.log")
    _same(["diff", "--ref", reference, *runs], lambda: api.diff_many(runs, reference))


def test_diff_of_a_shell_expanded_glob_is_one_library_call():
    """`blaslog diff a b c` (what a shell makes of an unquoted glob) is api.diff_command of the same arguments: the
    same JSON, the split said first among the notes."""
    runs = [str(p) for p in sorted((GENERATED / "lt_fp32_tp4").glob("*.log"))]
    arguments = [*runs, str(GENERATED / "lt_fp32_unsharded.stdout.log")]
    _same(["diff", *arguments], lambda: api.diff_command(arguments))
    assert "quote globs" in api.diff_command(arguments).notes[0]


def test_check_with_tunableop_files_is_api_check():
    log = str(FIXTURES / "tunableop" / "tp2-logs" / "rank0.log")
    table = str(FIXTURES / "tunableop" / "tp2" / "tunableop_results0.csv")
    assert _json(api.check([log], tunableop=[table])) == _json(api.check_tunableop([log], [table]))
    _same(["check", log, "--tunableop", table], lambda: api.check([log], tunableop=[table]))


def test_pins_are_the_diffs_own(tmp_path):
    """--emit-tunableop is the diff with `pin`: the report the command prints is the one api.diff gives, and the
    pins it writes are that report's; with --ref (several runs, no one pairing to pin) it is refused, not
    ignored."""
    sharded = str(FIXTURES / "tunableop" / "tp2" / "*.csv")
    unsharded = str(FIXTURES / "tunableop" / "tp1" / "tunableop_results0.csv")
    out = tmp_path / "pins.csv"
    result = CliRunner().invoke(cli, ["diff", sharded, unsharded, "--emit-tunableop", str(out), "-f", "json", "-q"])
    report = api.diff(sharded, unsharded, pin=True)
    assert result.stdout == _json(report)
    from blaslog.tunableop import render

    assert out.read_text() == render(report.pinning)
    assert api.diff(sharded, unsharded).pinning is None
    refused = CliRunner().invoke(cli, ["diff", "--ref", unsharded, sharded, "--emit-tunableop", str(out)])
    assert refused.exit_code == 2 and "leave out --ref" in refused.stderr
