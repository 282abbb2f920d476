"""One exit status for one outcome: `blaslog parse` exits the same whichever way it writes its output.

The plain parse renders a report held in memory (`-f markdown`, or any format with `--report`); json, jsonl,
csv and the piped table are written as the records are read; `-f parquet` and `--parquet` write a folder.
Each maps what happened to 0 or 2 through the CLI's one exit-status helper, so each gives the plain parse's
status: on clean logs, on logs with problems (unparsable lines: reported, exit 0; with --strict: exit 2), and
on bad input (an input missing among good ones, an input cut short, one holding no record at all).
"""

from __future__ import annotations

import os

import pytest

from blaslog.cli import cli
from tests.conftest import BAD, GENERATED, SEED

pytest.importorskip("pyarrow", reason="the parquet extra is not installed: pip install 'blaslog[parquet]'")

CLEAN = [SEED / "sharded.log", GENERATED / "rocblas_fp16_trace.log", GENERATED / "lt_fp32_tp4"]
BAD_CASES = sorted(p for p in BAD.iterdir() if p.suffix not in (".expected", ".md"))


def _ways(tmp_path) -> dict[str, list[str]]:
    """Every way `parse` writes its output: the options that pick it."""
    return {
        "in memory": ["-f", "markdown"],
        "in memory, with --report": ["-f", "json", "--report", f"csv={tmp_path / 'r.csv'}"],
        "json": ["-f", "json"],
        "jsonl": ["-f", "jsonl"],
        "csv": ["-f", "csv"],
        "piped table": ["-f", "table"],
        "json to a file": ["-f", "json", "-o", str(tmp_path / "r.json")],
        "table to a file": ["-o", str(tmp_path / "r.txt")],
        "parquet": ["-f", "parquet", "-o", str(tmp_path / "pq")],
        "--parquet": ["--parquet", str(tmp_path / "pq2"), "-f", "json"],
    }


def _statuses(runner, tmp_path, *args: str) -> dict[str, int]:
    out = {}
    for way, options in _ways(tmp_path).items():
        result = runner.invoke(cli, ["parse", *args, *options, "-q"])
        assert "Traceback" not in result.stderr, (way, result.stderr)
        assert result.exception is None or isinstance(result.exception, SystemExit), (way, result.exception)
        out[way] = result.exit_code
    return out


def _one_status(statuses: dict[str, int]) -> int:
    assert len(set(statuses.values())) == 1, statuses
    return statuses["in memory"]


@pytest.mark.parametrize("log", CLEAN, ids=lambda p: p.name)
def test_clean_logs_exit_0_every_way(runner, tmp_path, log):
    assert _one_status(_statuses(runner, tmp_path, str(log))) == 0


@pytest.mark.parametrize("case", BAD_CASES, ids=lambda p: p.name)
def test_bad_inputs_exit_as_the_plain_parse_every_way(runner, tmp_path, case):
    cwd = os.getcwd()
    os.chdir(BAD)
    try:
        status = _one_status(_statuses(runner, tmp_path, case.name))
        strict = _one_status(_statuses(runner, tmp_path, case.name, "--strict"))
    finally:
        os.chdir(cwd)
    expected = (BAD / (case.name + ".expected")).read_text()
    assert status == int(expected.split("\n", 1)[0].removeprefix("exit: "))  # the corpus's golden status
    assert strict == (2 if ": error:" in expected else status)


def test_problems_are_reported_and_exit_0_every_way(runner, tmp_path):
    """Unparsable lines among good records are findings of the parse, not failures: exit 0 (2 with --strict)."""
    log = tmp_path / "mixed.log"
    log.write_text((SEED / "sharded.log").read_text() + (BAD / "unbalanced_brackets.log").read_text())
    assert _one_status(_statuses(runner, tmp_path, str(log))) == 0
    assert _one_status(_statuses(runner, tmp_path, str(log), "--strict")) == 2


@pytest.mark.parametrize(
    "extra",
    [str(SEED / "missing.log"), str(BAD / "gzip_cut_short.log.gz"), str(BAD / "only_program_output.log")],
    ids=["missing", "cut short", "nothing in it"],
)
def test_a_bad_input_among_good_ones_exits_as_the_plain_parse(runner, tmp_path, extra):
    statuses = _statuses(runner, tmp_path, str(SEED / "sharded.log"), extra)
    expected = 0 if extra.endswith("only_program_output.log") else 2  # a file of no record beside good ones: 0
    assert _one_status(statuses) == expected


def test_a_failed_streamed_parse_leaves_no_output_file(runner, tmp_path):
    """As the plain parse's report file, a streamed one is kept only when the run succeeded."""
    for options in (["-f", "json"], ["-f", "table"], ["-f", "markdown"]):
        out = tmp_path / "r.out"
        result = runner.invoke(
            cli, ["parse", str(SEED / "sharded.log"), str(BAD / "gzip_cut_short.log.gz"), *options, "-o", str(out)]
        )
        assert result.exit_code == 2 and not out.exists(), options


def test_report_files_are_written_beside_a_piped_table(runner, tmp_path):
    """`parse --report` with the default (piped) table writes the report files; it dropped them before."""
    result = runner.invoke(cli, ["parse", str(SEED / "sharded.log"), "--report", f"json={tmp_path / 'r.json'}", "-q"])
    assert result.exit_code == 0 and "sharded.log" in result.stdout
    assert '"k": 8' in (tmp_path / "r.json").read_text()


# ---- probe: what the probe came to, through the same helper ------------------------------------------------------


def _probe_with(monkeypatch, probed=None, crash=None):
    from blaslog import native

    def fake(configs, **kwargs):
        if crash is not None:
            raise crash
        return probed

    monkeypatch.setattr(native, "probe", fake)


def _entry(algo: int) -> dict:
    return {"algoId": algo, "computeType": "COMPUTE_32F", "scaleType": "R_32F", "numericalImplFlags": "0x40202"}


@pytest.mark.parametrize(
    ("entries", "errors", "crashed", "status"),
    [
        ([_entry(21)], [], False, 0),
        ([_entry(21)], [({"algoId": 6, "computeType": "COMPUTE_32F"}, "not supported")], False, 2),
        ([], [({"algoId": 6, "computeType": "COMPUTE_32F"}, "not supported")], False, 2),
        ([], [], False, 2),
        ([_entry(21)], [], True, 2),
    ],
    ids=["probed", "one failed", "all failed", "nothing probed", "crashed after one"],
)
def test_probe_exits_2_on_any_failure_and_says_it(runner, monkeypatch, entries, errors, crashed, status):
    from blaslog.errors import ProbeCrashed
    from blaslog.native import ProbeResult

    probed = ProbeResult(library="libcublasLt.so.12", version_text="12.9.3", entries=entries, errors=errors)
    crash = None
    if crashed:
        crash = ProbeCrashed("the library crashed the probe's worker (SIGSEGV) after 1 configuration")
        crash.partial = probed  # type: ignore[attr-defined]
    _probe_with(monkeypatch, probed, crash)
    result = runner.invoke(cli, ["probe", "--algo-id", "21", "-f", "json"])
    assert result.exit_code == status, result.output
    assert ("blaslog: error:" in result.stderr) == (status == 2)
    assert "Traceback" not in result.output
