"""A dialect is declared in one place: registering a LogFormat subclass is all blaslog needs to sniff it,
parse it, cut a big file of it into pieces, drop a second dialect's copy of the same calls, report its near
misses and say how to turn its logging on."""

from __future__ import annotations

import functools
import inspect
import re
from typing import Any

import pytest
from lark import Lark

import blaslog
from blaslog import formats
from blaslog.formats import (
    FORMAT_CLASSES,
    Sniffer,
    boundary_regex,
    format_names,
    logging_hints,
    near_miss,
    register_format,
    registered,
    resolve_formats,
    same_calls,
    unregister_format,
)
from blaslog.formats._base import LeafTransformer, LogFormat, RecordError, to_int, transpose
from blaslog.records import GemmCall

TOY_GRAMMAR = r"""
start: "TOY|" NAME pair+
pair: NAME "=" VALUE
NAME: /[A-Za-z_]\w*/
VALUE: /[^\s=]+/
%ignore " "
"""


class _ToyTransformer(LeafTransformer):
    def start(self, children: list[Any]) -> tuple[Any, dict[str, Any]]:
        return children[0], dict(children[1:])

    def pair(self, children: list[Any]) -> tuple[Any, Any]:
        return children[0], children[1]


class Toy(LogFormat):
    """A toy library's log: `TOY| gemm m=64 n=32 k=16 trans=T A=0x7f00 tid=12`, one call a line."""

    name = "toy"
    library = "toylib"
    description = "toy log lines (TOY_LOG=1)"
    logging_hint = "TOY_LOG=1"
    grammar = "<inline>"
    start = re.compile(r"^TOY\| ")
    boundary = rb"TOY\| "
    near_miss = r"^TOY\b(?!\| )"
    transformer = _ToyTransformer

    @functools.cache  # noqa: B019 (one toy parser for the test session)
    def parser(self, rule: str | None = None) -> Lark:
        return Lark(TOY_GRAMMAR, parser="lalr")

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        function, values = generic
        if function != "gemm":
            raise RecordError(f"{function} is not a GEMM")
        kwargs = {name: to_int(values[name], name) for name in ("m", "n", "k")}
        kwargs.update(
            library=self.library,
            function=function,
            transa=transpose(values.get("trans"), "trans"),
            a_ptr=values.get("A"),
            thread=values.get("tid"),
            log_format=self.name,
        )
        return GemmCall, kwargs, ()


class ToyBench(LogFormat):
    """The toy library's bench lines: the same calls as its log, when both are on."""

    name = "toy-bench"
    library = "toylib"
    description = "toy bench lines (TOY_LOG=2)"
    logging_hint = "TOY_LOG=2"
    grammar = "<inline>"
    start = re.compile(r"^toy-bench ")
    same_calls_as = "toy"
    transformer = _ToyTransformer

    @functools.cache  # noqa: B019
    def parser(self, rule: str | None = None) -> Lark:
        return Lark(TOY_GRAMMAR.replace('"TOY|"', '"toy-bench"'), parser="lalr")

    build = Toy.build


def _toy_line(i: int) -> str:
    return f"TOY| gemm m={64 + i % 3} n=32 k=16 trans=T A=0x7f{i:04x}00 tid={100 + i % 2}"


@pytest.fixture()
def toy():
    with registered(Toy), registered(ToyBench):
        yield


def test_a_registered_dialect_is_sniffed_and_parsed(toy):
    text = "hello from the program\n" + "".join(_toy_line(i) + "\n" for i in range(6)) + "TOY: not a record\n"
    result = blaslog.parse_text(text)
    summary = result.files[0]
    assert [(r.m, r.n, r.k, r.transa, r.a_ptr, r.thread, r.line) for r in result.gemms] == [
        (64 + i % 3, 32, 16, "T", f"0x7f{i:04x}00", str(100 + i % 2), i + 2) for i in range(6)
    ]
    assert {r.library for r in result.gemms} == {"toylib"}
    assert summary.formats == {"toy": 6}
    assert (summary.foreign_lines, summary.unparsable_lines) == (1, 1)  # the last line is a near miss
    assert "no known log format" in summary.problems[0].message


def test_a_registered_dialect_is_served_from_the_shape_cache(toy):
    """Lines of one shape go through the grammar once, whatever their sizes, pointers and thread ids."""
    from blaslog.inputs import text_reader
    from blaslog.parse._lines import _FileParser

    parser = _FileParser(text_reader("".join(_toy_line(i) + "\n" for i in range(300))), Sniffer(), "warn")
    assert len([r for r in parser.records() if isinstance(r, GemmCall)]) == 300
    stats = parser.cache.stats
    assert (stats.grammar_runs, stats.misses, stats.hits) == (1, 1, 299)


def test_the_registry_lists_it(toy):
    assert format_names()[-2:] == ("toy", "toy-bench")
    assert "toy" not in blaslog.FORMAT_NAMES  # the bundled dialects only
    assert "TOY_LOG=1" in logging_hints() and "TOY_LOG=2" in logging_hints()
    assert ("toy", "toy-bench") in same_calls()
    assert resolve_formats(["toylib"]) == {"toy", "toy-bench"} == resolve_formats(["toylib-all"])
    assert near_miss("TOY: something") and not near_miss("TOY| gemm m=1 n=1 k=1")


def test_an_explicit_log_format_names_it(toy):
    text = "".join(_toy_line(i) + "\n" for i in range(3)) + "[2026-06-06 15:31:42][cublasLt][1][Info][x] y=1\n"
    only = blaslog.parse_text(text, log_format="toy")
    assert len(only.gemms) == 3 and only.files[0].formats == {"toy": 3}
    with pytest.raises(blaslog.UnknownFormatError, match="did you mean 'toy'"):
        resolve_formats(["tyo"])


def test_a_sniffer_reads_the_dialects_registered_when_it_was_made():
    before = Sniffer()
    with registered(Toy):
        after = Sniffer()
        assert before.sniff(_toy_line(0)) is None
        found = after.sniff(_toy_line(0))
        assert found is not None and found[0].name == "toy" and found[1] == 0
    assert "toy" not in format_names() and Sniffer().sniff(_toy_line(0)) is None


def test_unregistering_removes_every_trace_of_it():
    register_format(Toy)
    try:
        assert b"TOY" in boundary_regex().pattern
    finally:
        assert unregister_format("toy") is Toy
    assert b"TOY" not in boundary_regex().pattern
    assert "TOY_LOG=1" not in logging_hints() and not near_miss("TOY: something")
    assert format_names() == tuple(cls.name for cls in FORMAT_CLASSES)


def test_a_name_is_registered_once():
    class Other(Toy):
        pass

    with registered(Toy), pytest.raises(ValueError, match="registered already"):
        register_format(Other)


def test_the_same_calls_in_two_dialects_count_once(toy):
    from blaslog.runs import one_dialect_per_call

    lines = []
    for i in range(4):
        lines += [_toy_line(i), _toy_line(i).replace("TOY|", "toy-bench")]
    result = blaslog.parse_text("\n".join(lines) + "\n")
    assert result.files[0].formats == {"toy": 4, "toy-bench": 4}
    kept, notes = one_dialect_per_call(list(result.gemms))
    assert [r.log_format for r in kept] == ["toy"] * 4
    assert notes == [
        "<text>: holds both toy and toy-bench lines for the same calls; toy-bench lines are left out "
        "so that each call counts once"
    ]


def test_boundary_regex_cuts_before_a_registered_dialects_records(toy):
    data = b"".join(b"program says %d\n" % i + _toy_line(i).encode() + b"\n" for i in range(100))
    cuts = [m.start() + 1 for m in boundary_regex().finditer(data)]
    assert len(cuts) == 100
    assert all(data[cut:].startswith(b"TOY| ") for cut in cuts)


@pytest.mark.parametrize("tag", ["", "[rank0]: ", "3: "])
def test_the_bundled_dialects_boundaries_are_the_ones_big_files_were_cut_at(tag):
    """A piece of a big input begins only with a one-line record (perhaps after a launcher's tag): the regex finds
    the candidates, the sniffer has the last word."""
    pattern = boundary_regex()
    sniffer = Sniffer()
    for line, cut in [
        (b"[2026-06-06 15:31:42][cublasLt][77][Trace][cublasLtMatmul] A=0x1", True),
        (b"[2026-06-06 15:31:42][HIPBLASLT][77][Trace][rocblaslt_matmul] A=0x1", True),
        (b"rocblas_gemm_ex,N,T,4", True),
        (b"./rocblas-bench -f gemm_ex", True),
        (b"hipblaslt-bench --api_method c", True),
        (b"i! m : 4", False),
        (b"I! cuBLAS (v12.9) function cublasGemmEx called:", False),  # records of several lines
        (b"- { rocblas_function: rocblas_gemm_ex, M: 4 }", False),
        (b"[cublasLt][77][Trace][cublasLtMatmul] A=0x1", False),  # no time stamp: may follow other text
    ]:
        line = tag.encode() + line
        assert pattern.search(b"x\n" + line) is not None or not cut, line
        assert sniffer.cuts(line.decode()) is cut, line


def test_split_points_cut_a_big_file_of_a_registered_dialect(toy, tmp_path):
    from blaslog import _parallel

    if "boundary_regex" not in inspect.getsource(_parallel):
        pytest.skip("blaslog._parallel does not cut at blaslog.formats.boundary_regex() yet")
    path = tmp_path / "toy.log"
    path.write_bytes(b"".join(b"program says %d\n" % i + _toy_line(i).encode() + b"\n" for i in range(40_000)))
    points = _parallel.split_points(str(path), 4)
    data = path.read_bytes()
    assert len(points) == 5
    assert all(data[point:].startswith(b"TOY| ") for point in points[1:-1])


def test_every_bundled_dialect_declares_itself():
    for cls in FORMAT_CLASSES:
        assert cls.name and cls.library and cls.description, cls
        assert cls.same_calls_as is None or cls.same_calls_as in format_names(), cls
        if cls.boundary is not None:
            re.compile(cls.boundary)
        if cls.near_miss is not None:
            re.compile(cls.near_miss)
    assert formats.same_calls() == (("rocblas-trace", "rocblas-bench"), ("hipblaslt-bench", "hipblaslt"))
    hints = " ".join(logging_hints())
    assert all(
        var in hints
        for var in (
            "CUBLASLT_LOG_LEVEL",
            "CUBLAS_LOGINFO_DBG",
            "ROCBLAS_LAYER",
            "HIPBLASLT_LOG_LEVEL",
            "HIPBLASLT_LOG_MASK=32",
        )
    )


def test_the_command_lists_it_in_help_and_in_the_logging_hint(toy, tmp_path):
    """No edit outside the dialect: `--log-format` help and the "was logging on?" error read the registry."""
    from click.testing import CliRunner

    from blaslog.cli import cli

    runner = CliRunner()
    help_text = " ".join(runner.invoke(cli, ["parse", "--help"]).stdout.split()).replace("- ", "-")  # click wraps
    assert "toy, toy-bench" in help_text
    empty = tmp_path / "quiet.log"
    empty.write_text("step 1 loss=4.2\n")
    result = runner.invoke(cli, ["summary", str(empty)])
    assert result.exit_code == 2 and "was logging on?" in result.stderr and "TOY_LOG=1" in result.stderr
    found = runner.invoke(cli, ["summary", "-f", "json", "-q", str(_write(tmp_path / "toy.log"))])
    assert found.exit_code == 0 and '"gemm_calls": 6' in found.stdout


def _write(path):
    path.write_text("".join(_toy_line(i) + "\n" for i in range(6)))
    return path


def _bundled_lines() -> list[str]:
    from blaslog.inputs import Reader
    from tests.conftest import FIXTURES

    paths = sorted(p for p in FIXTURES.glob("**/*") if p.is_file() and p.suffix in (".log", ".txt", ".gz", ".csv"))
    return [line for path in paths for batch in Reader(str(path)).batches() for line in batch.lines]


def test_the_signs_find_what_every_dialect_s_start_finds_on_every_bundled_line():
    """A line's signs pick the dialects whose starts run; the answer is the one all of them give at once, where a
    line holds one sign inside another (`rocblas_function` holds `rocblas_` and `function`) too."""
    lines = _bundled_lines()
    assert len(lines) > 10_000
    sniffer = Sniffer()
    every = sniffer._start  # every dialect's start in one expression
    signs = list(sniffer._owners)
    nested = 0
    for line in lines:
        expected = sniffer._search(every, line)
        assert sniffer.sniff(line) == expected, line
        nested += expected is not None and any(a != b and a in b and b in line for a in signs for b in signs)
    assert nested  # the case of one sign inside another is among them
    made_up = [
        "rocblas_function rocblas_gemm_ex,N,N,1,1,1,1,0x1,f32_r,1,0x2,f32_r,1,0,0x3,f32_r,1,0x3,f32_r,1,f32_r,0,0"
    ]
    for line in made_up:
        assert sniffer.sniff(line) == sniffer._search(every, line)
