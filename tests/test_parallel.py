"""Parsing in several processes gives exactly what one process gives."""

from __future__ import annotations

import json
from itertools import pairwise

import pytest

import blaslog
import blaslog._parallel as parallel
from blaslog.records import FileSummary
from blaslog.runs import read_run
from tests.conftest import GENERATED


@pytest.mark.parametrize(
    "name",
    [
        "lt_fp32_unsharded.stdout.log",
        "lt_fp32_tp4/blaslt_321677.log",
        "rocblas_fp16_trace.log",
        "hipblaslt_bf16_tp2_rank0.api.log",
    ],
)
def test_one_input_cut_in_pieces(name, monkeypatch):
    path = str(GENERATED / name)
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    points = parallel.split_points(path, 3)
    assert len(points) >= 3  # really cut
    ((run, summary),) = parallel.read_runs_parallel([path], log_format=None, on_error="warn", jobs=3)
    one_run, one_summary = read_run(path)
    assert [(o.call, o.line, o.end_line, o.thread) for o in run] == [
        (o.call, o.line, o.end_line, o.thread) for o in one_run
    ]
    assert summary.to_dict() == one_summary.to_dict()
    assert summary.balanced()


@pytest.mark.parametrize("tag", ["[rank0]: ", "[default3]:", "0: ", "[1,0]<stdout>: "])
@pytest.mark.parametrize("name", ["lt_fp32_unsharded.stdout.log", "rocblas_fp16_trace.log"])
def test_an_input_with_a_launcher_tag_before_every_line_is_cut_in_pieces(name, tag, monkeypatch, tmp_path):
    """torchrun, srun --label and mpirun put a tag before every line: the pieces are still cut at record starts,
    and together say what one process says (the tag's warning once, at its first line)."""
    text = (GENERATED / name).read_text()
    path = tmp_path / "tagged.log"
    path.write_text("".join(tag + line for line in text.splitlines(keepends=True)))
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    points = parallel.split_points(str(path), 3)
    assert len(points) == 4  # really cut, into three
    ((run, summary),) = parallel.read_runs_parallel([str(path)], log_format=None, on_error="warn", jobs=3)
    one_run, one_summary = read_run(str(path))
    assert [(o.call, o.line, o.end_line) for o in run] == [(o.call, o.line, o.end_line) for o in one_run]
    assert len(run) > 10
    assert summary.to_dict() == one_summary.to_dict()
    assert [p.message for p in summary.problems].count(one_summary.problems[0].message) == 1


def test_several_inputs_side_by_side():
    paths = [str(p) for p in sorted((GENERATED / "lt_fp32_tp4").glob("*.log"))]
    results = parallel.read_runs_parallel(paths, log_format=None, on_error="warn", jobs=2)
    assert [s.path for _, s in results] == paths
    assert [len(r) for r, _ in results] == [78, 78, 78, 77]


def test_parse_parallel_equals_serial():
    import blaslog

    paths = [str(GENERATED / "rocblas_fp16_trace.log"), str(GENERATED / "rocblas_fp16_bench.log")]
    together = blaslog.parse(paths, jobs=2)
    alone = blaslog.parse(paths, jobs=1)
    assert together.records == alone.records
    assert [f.to_dict() for f in together.files] == [f.to_dict() for f in alone.files]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
@pytest.mark.parametrize("kind", ["gemm", "all"])
def test_parse_output_in_pieces_is_byte_identical(fmt, kind, monkeypatch, runner):
    from blaslog.cli import cli

    path = str(GENERATED / "lt_fp32_unsharded.stdout.log")
    one = runner.invoke(cli, ["parse", path, "-f", fmt, "--kind", kind, "-q", "-j", "1"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    pieces = runner.invoke(cli, ["parse", path, "-f", fmt, "--kind", kind, "-q", "-j", "3"])
    assert one.exit_code == pieces.exit_code == 0
    assert pieces.stdout == one.stdout


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
@pytest.mark.parametrize("before", ["", "rows", "no rows"])
def test_pieces_without_rows_where_rows_come_before_them_or_not(fmt, before, monkeypatch, runner, tmp_path):
    """The first piece (read by the main process) may hold no GEMM, and another input may come first, with rows
    or without: the separators between rows are where one process puts them."""
    from blaslog.cli import cli

    text = (GENERATED / "lt_fp32_unsharded.stdout.log").read_text()
    calls = "".join(line for line in text.splitlines(keepends=True) if "[Trace]" in line)
    others = "".join(line for line in text.splitlines(keepends=True) if "[Trace]" not in line)
    big = tmp_path / "big.log"
    big.write_text(others * 2 + calls * 12)  # none in the first of three pieces, some in the others
    inputs = [str(big)]
    if before:
        small = tmp_path / "small.log"
        small.write_text(calls[: calls.index("\n") + 1] if before == "rows" else others[:2000].rsplit("\n", 1)[0])
        inputs.insert(0, str(small))
    one = runner.invoke(cli, ["parse", *inputs, "-f", fmt, "-q", "-j", "1"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    assert len(parallel.split_points(str(big), 3)) == 4
    pieces = runner.invoke(cli, ["parse", *inputs, "-f", fmt, "-q", "-j", "3"])
    assert one.exit_code == pieces.exit_code == 0, pieces.output
    assert pieces.stdout == one.stdout
    assert one.stdout.count("cublasLtMatmul") >= calls.count("\n")


@pytest.mark.parametrize("max_distinct", [3, 10_000])
def test_pieces_merged_keep_every_call_or_count_it(max_distinct, monkeypatch):
    """Merging pieces (distinct calls and threads looked up once, arrays extended whole) gives each call at its
    line of the whole input; past `max_distinct` distinct calls, those not kept are counted, none lost."""
    import blaslog.runs as runs

    monkeypatch.setattr(runs.CompactRun.__init__, "__defaults__", ("", max_distinct))
    path = str(GENERATED / "lt_fp32_unsharded.stdout.log")
    with open(path, "rb") as handle:
        data = handle.read()
    cuts = [0, data.index(b"\n", len(data) // 3) + 1, data.index(b"\n", 2 * len(data) // 3) + 1, len(data)]
    reads = [parallel.read_piece(parallel.Piece(path, a, b), parallel.run_of) for a, b in pairwise(cuts)]
    parts = [(read.value, read.summary, read.summary.lines) for read in reads]
    merged, summary = runs.merge(parts, path)
    monkeypatch.undo()
    whole, _ = read_run(path)
    expected = {o.line: (o.call, o.end_line, o.thread) for o in whole}
    got = [(o.line, (o.call, o.end_line, o.thread)) for o in merged]
    assert all(expected[line] == value for line, value in got)
    assert len(merged) + merged.overflow == len(whole) == summary.gemm_records
    if max_distinct < len(whole.calls):
        assert merged.overflow > 0 and len(merged.calls) == max_distinct
    else:
        assert got == [(o.line, (o.call, o.end_line, o.thread)) for o in whole]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_rows_written_by_workers_carry_no_workflow_command(fmt, monkeypatch, runner, tmp_path):
    """The rows of a piece are defused by the worker that writes them, a chunk of whole rows at a time (the main
    process passes the piece's bytes on as they are): a name holding `##[` in every row never reaches the
    runner, whatever the piece's blocks."""
    from blaslog.cli import cli

    log = tmp_path / "x##[set-output name=a]b.log"
    log.write_bytes((GENERATED / "lt_fp32_unsharded.stdout.log").read_bytes())
    one = runner.invoke(cli, ["parse", str(log), "-f", fmt, "-q", "-j", "1"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    pieces = runner.invoke(cli, ["parse", str(log), "-f", fmt, "-q", "-j", "3"])
    assert one.exit_code == pieces.exit_code == 0
    assert "##[" not in pieces.stdout and "##" in pieces.stdout
    assert pieces.stdout == one.stdout


def test_rows_of_pieces_reach_an_output_that_is_not_utf8_whole(monkeypatch, tmp_path):
    """The main process passes a piece's rows on as UTF-8 bytes in blocks that end at line ends, so an output in
    another encoding (PYTHONIOENCODING=latin-1) can decode each block: no character is cut in two."""
    from click.testing import CliRunner

    from blaslog import stream
    from blaslog.cli import cli

    folder = tmp_path / ("é" * 120)
    folder.mkdir()
    log = folder / "big.log"
    log.write_bytes((GENERATED / "lt_fp32_unsharded.stdout.log").read_bytes() * 2)
    runner = CliRunner(charset="latin-1")
    one = runner.invoke(cli, ["parse", str(log), "-f", "csv", "--kind", "all", "-q", "-j", "1"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    monkeypatch.setattr(stream.Spool.blocks, "__defaults__", (997,))  # many blocks: many chances to cut an é
    pieces = runner.invoke(cli, ["parse", str(log), "-f", "csv", "--kind", "all", "-q", "-j", "2"])
    assert one.exit_code == pieces.exit_code == 0, pieces.output
    assert "é" * 120 in one.stdout and pieces.stdout_bytes == one.stdout_bytes


def test_whole_lines_cut_blocks_at_line_ends(tmp_path):
    from blaslog.stream import _whole_lines

    path = tmp_path / "rows"
    data = "".join(f"{'é' * (i % 7)}row {i}\n" for i in range(5000)).encode() + b"tail without end"
    path.write_bytes(data)
    with open(path, "rb") as handle:
        blocks = list(_whole_lines(handle, size=100))
    assert b"".join(blocks) == data
    assert all(block.endswith(b"\n") for block in blocks[:-1]) and blocks[-1] == b"tail without end"
    for block in blocks:
        block.decode("utf-8")


def _parse_to_real_stdout(monkeypatch, tmp_path, name: str, args: list[str]) -> bytes:
    """`blaslog parse ARGS` in this process with stdout a real file (a file descriptor under it, as a shell
    redirection or pipe gives): the rows of pieces then go out by os.sendfile."""
    import io
    import sys

    from blaslog.cli import cli

    path = tmp_path / name
    with open(path, "wb") as raw:
        stdout = io.TextIOWrapper(raw, encoding="utf-8", newline="")
        monkeypatch.setattr(sys, "stdout", stdout)
        with pytest.raises(SystemExit) as exited:
            cli.main(["parse", *args], prog_name="blaslog")
        stdout.flush()
        monkeypatch.undo()
    assert exited.value.code == 0
    return path.read_bytes()


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
def test_rows_of_pieces_sent_by_the_kernel_are_the_rows_of_one_process(fmt, monkeypatch, tmp_path):
    from blaslog import stream

    log = str(GENERATED / "lt_fp32_unsharded.stdout.log")
    sent: list[bool] = []
    send = stream.Spool.send
    monkeypatch.setattr(stream.Spool, "send", lambda self, fd: sent.append(send(self, fd)) or sent[-1])
    one = _parse_to_real_stdout(monkeypatch, tmp_path, "one", [log, "-f", fmt, "-q", "-j", "1"])
    monkeypatch.setattr(stream.Spool, "send", lambda self, fd: sent.append(send(self, fd)) or sent[-1])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    pieces = _parse_to_real_stdout(monkeypatch, tmp_path, "pieces", [log, "-f", fmt, "-q", "-j", "3"])
    assert len(sent) == 2 and all(sent)  # each piece but the first (read here) went out whole by os.sendfile
    assert pieces == one and one.count(b"\n") > 50


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_rows_of_pieces_sent_into_an_output_file(fmt, monkeypatch, tmp_path, runner):
    from blaslog.cli import cli

    log = str(GENERATED / "lt_fp32_unsharded.stdout.log")
    one, pieces = tmp_path / "one.out", tmp_path / "pieces.out"
    assert runner.invoke(cli, ["parse", log, "-f", fmt, "-q", "-j", "1", "-o", str(one)]).exit_code == 0
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    assert runner.invoke(cli, ["parse", log, "-f", fmt, "-q", "-j", "3", "-o", str(pieces)]).exit_code == 0
    assert pieces.read_bytes() == one.read_bytes() and not list(tmp_path.glob(".blaslog-*"))


def test_a_spool_skips_the_separator_and_goes_whole_through_a_pipe(tmp_path):
    import os
    import threading

    from blaslog.stream import Spool

    piece = tmp_path / "piece"
    rows = b"".join(b',\n    {"row": %d, "text": "\xc3\xa9"}' % i for i in range(20000))
    piece.write_bytes(rows)
    read, write = os.pipe()
    got: list[bytes] = []

    def drain() -> None:
        with os.fdopen(read, "rb") as pipe:
            got.append(pipe.read())

    reader = threading.Thread(target=drain)
    reader.start()
    spool = Spool(str(piece), b",")
    assert spool.send(write)  # more than a pipe holds: the reader empties it as it goes
    os.close(write)
    reader.join()
    assert got == [rows[1:]]
    assert b"".join(Spool(str(piece), b"x").blocks(100)) == rows  # no separator there: nothing skipped


def test_a_spool_that_cannot_be_sent_is_written_in_blocks(tmp_path):
    import os

    from blaslog.stream import Spool

    piece = tmp_path / "piece"
    piece.write_bytes(b"".join(b"row %d \xc3\xa9\n" % i for i in range(5000)))
    spool = Spool(str(piece))
    fd = os.open(piece, os.O_RDONLY)  # not writable: os.sendfile refuses it before writing anything
    try:
        assert not spool.send(fd)
    finally:
        os.close(fd)
    blocks = list(spool.blocks(100))
    assert b"".join(blocks) == piece.read_bytes() and all(b.endswith(b"\n") for b in blocks)


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_line_starts_counted_in_ranges_side_by_side(parts, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    data = (GENERATED / "lt_fp32_unsharded.stdout.log").read_bytes()
    path = tmp_path / "log"
    path.write_bytes(data)
    ends = [i + 1 for i, byte in enumerate(data) if byte == 10]
    points = [0, ends[10], ends[500], ends[501], len(data)]  # pieces of very different sizes
    expected = [1 + data.count(b"\n", 0, point) for point in points[:-1]]
    assert parallel.line_starts(str(path), points, None, parts) == expected
    with ThreadPoolExecutor(3) as pool:
        assert parallel.line_starts(str(path), points, pool, parts) == expected
    assert parallel.line_starts(str(path), [0, len(data)], None, parts) == [1]  # one piece: nothing to count


def test_spools_are_closed_when_the_output_fails(tmp_path):
    """After the writer failed (a closed pipe), every Spool the parse made is let go: none stays open (an
    unlinked piece's disk space would be held until exit), whether the writer or the reading loop dropped it."""
    import time

    from blaslog.stream import Spool, write_behind

    made: list[Spool] = []

    def chunks():
        yield "begin"
        time.sleep(0.3)  # the writer fails meanwhile
        for i in range(3):
            path = tmp_path / f"piece-{i}"
            path.write_bytes(b"row\n")
            made.append(Spool(str(path)))
            yield made[-1]

    def write(chunk):
        raise BrokenPipeError

    with pytest.raises(BrokenPipeError):
        write_behind(write, chunks())
    assert made and all(spool.handle.closed for spool in made)


def test_a_spool_is_let_go_when_stdout_fails(tmp_path, monkeypatch):
    import sys

    from blaslog.cli._common import CliError, _echo
    from blaslog.stream import Spool

    piece = tmp_path / "piece"
    piece.write_bytes(b"row\n" * 10)

    class Closed:
        """A stdout whose descriptor is gone: every flush fails."""

        encoding = "utf-8"

        def __init__(self):
            self.buffer = self

        def flush(self):
            raise OSError(9, "Bad file descriptor")

    monkeypatch.setattr(sys, "stdout", Closed())
    spool = Spool(str(piece))
    with pytest.raises(CliError, match="cannot write to standard output"):
        _echo(spool)
    monkeypatch.undo()
    assert spool.handle.closed


def _same_with_pieces(runner, monkeypatch, path, args, jobs=3):
    """`blaslog ARGS PATH` with -j 1 and with pieces forced (SPLIT_MIN 0): exit code, stdout and stderr."""
    from blaslog.cli import cli

    one = runner.invoke(cli, [*args, str(path), "-j", "1"])
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    pieces = runner.invoke(cli, [*args, str(path), "-j", str(jobs)])
    monkeypatch.undo()
    assert (pieces.exit_code, pieces.stdout, pieces.stderr) == (one.exit_code, one.stdout, one.stderr)
    return one


@pytest.mark.parametrize("encoding", ["utf-16", "bzip2", "xz"])
def test_a_compressed_or_utf16_input_is_not_cut(encoding, monkeypatch, runner, tmp_path):
    """Its bytes are not the log's: a piece of them cannot be read on its own (a 73 MB UTF-16 log, as PowerShell's
    `>` writes, read in pieces gave "binary data" on every line and exit 2)."""
    import bz2
    import lzma

    text = (GENERATED / "lt_fp32_unsharded.stdout.log").read_text()
    data = {"utf-16": lambda: text.encode("utf-16"), "bzip2": lambda: bz2.compress(text.encode())}.get(
        encoding, lambda: lzma.compress(text.encode())
    )()
    path = tmp_path / "run.log"
    path.write_bytes(data)
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    assert not parallel.splittable(str(path))
    monkeypatch.undo()
    one = _same_with_pieces(runner, monkeypatch, path, ["summary"])
    assert one.exit_code == 0 and "cublasLtMatmul" in one.stdout


def test_lines_ended_with_cr_alone_are_not_cut_nor_taken_for_such_in_a_piece(monkeypatch, runner, tmp_path):
    """A log that begins with more than a block of progress-bar output (CR, no LF) is read with CR line ends as a
    whole, so it is not cut; a piece whose first block holds CRs and no LF is not switched to CR line ends."""
    source = (GENERATED / "lt_fp32_unsharded.stdout.log").read_bytes()
    bar = b"".join(b"\rDownloading: %3d%%|%-50s| %d/9000" % (i % 100, b"#" * (i % 50), i) for i in range(9000))
    head = tmp_path / "bar_first.log"
    head.write_bytes(bar + b"\n" + source)
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    assert not parallel.splittable(str(head))
    monkeypatch.undo()
    _same_with_pieces(runner, monkeypatch, head, ["parse", "-f", "csv"], jobs=2)
    record = next(line for line in source.splitlines() if b"[cublasLt]" in line and b"[Api]" in line)
    program = b"".join(b"program output line %d\n" % i for i in range(20000))
    steps = b"".join(b"\r step %d loss=%.3f" % (i, 1 / (i + 1)) for i in range(30000))
    tail = tmp_path / "bar_last.log"
    tail.write_bytes(source + program + record + steps)
    _same_with_pieces(runner, monkeypatch, tail, ["summary"], jobs=2)


def test_no_cut_after_a_line_that_ends_with_a_backslash(monkeypatch, runner, tmp_path):
    """A dialect may continue such a line onto the next one, whatever that line holds: never cut there."""
    lines = (GENERATED / "lt_fp32_unsharded.stdout.log").read_text().splitlines(keepends=True)
    windows_path = (
        "[2026-06-06 15:30:06][cublasLt][321377][Info][cublasLtCreate] loading kernels from "
        "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.9\\bin\\\n"
    )
    gemm = next(line for line in lines if "[Trace][cublasLtMatmul]" in line).replace("rows=1024", "rows=1000")
    before, after = "".join(lines[: len(lines) // 2]), gemm + "".join(lines[len(lines) // 2 :])
    pad = "program output, nothing to see here\n"
    while (len(before) + 60) * 2 < len(before) + len(windows_path) + len(after):  # the cut is sought in that line
        before = pad + before
    after += pad * (((len(before) + 60) * 2 - len(before) - len(windows_path) - len(after)) // len(pad))
    text = before + windows_path + after
    path = tmp_path / "backslash.log"
    path.write_text(text)
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    points = parallel.split_points(str(path), 2)
    monkeypatch.undo()
    data = path.read_bytes()
    assert len(points) == 3 and not data[: points[1]].rstrip().endswith(b"\\")
    _same_with_pieces(runner, monkeypatch, path, ["summary"], jobs=2)


def test_cuts_are_sought_in_the_dialects_read(monkeypatch, runner, tmp_path):
    """With --log-format cublas, another thread's cuBLASLt line between a cuBLAS record's `i!` lines is other text
    inside that record: no piece begins there."""
    import random

    lt = [
        line
        for line in (GENERATED / "lt_fp32_unsharded.stdout.log").read_text().splitlines(True)
        if "[cublasLt]" in line
    ]
    chosen = random.Random(2)
    out = []
    for line in (GENERATED / "cublas_classic_fp16.log").read_text().splitlines(True):
        out.append(line)
        if line.startswith(("i!  m:", "i!  lda:")):
            out.append(chosen.choice(lt))
    path = tmp_path / "mixed.log"
    path.write_text("".join(out))
    one = _same_with_pieces(runner, monkeypatch, path, ["summary", "--log-format", "cublas"])
    assert one.exit_code in (0, 1) and "cublasGemmEx" in one.stdout


@pytest.mark.parametrize("command", [["summary", "--strict"], ["parse", "-f", "jsonl", "--strict"]])
def test_strict_reads_an_input_whole(command, monkeypatch, runner, tmp_path):
    """The first error stops the reading at its line in the whole input (a piece would name its line in the piece,
    and rows of an earlier piece would come out before it)."""
    text = (GENERATED / "lt_fp32_unsharded.stdout.log").read_text()
    lines = text.splitlines(keepends=True)
    broken = next(i for i, line in enumerate(lines) if "[Trace][cublasLtMatmul]" in line and i > len(lines) * 2 // 3)
    lines[broken] = lines[broken].replace("rows=", "rows=oops", 1)
    path = tmp_path / "strict.log"
    path.write_text("".join(lines))
    monkeypatch.setattr(parallel, "SPLIT_MIN", 0)
    assert parallel.splittable(str(path)) and not parallel.splittable(str(path), "raise")
    monkeypatch.undo()
    one = _same_with_pieces(runner, monkeypatch, path, command)
    assert one.exit_code == 2 and f":{broken + 1}:" in one.stderr


def test_problems_past_the_cap_are_counted_as_one_reader_counts_them(monkeypatch, runner, tmp_path):
    """MAX_PROBLEMS holds for the input, not for each piece; a launcher tag's warning, said once per input, is kept
    past it (and said once, though each piece says it)."""
    source = (GENERATED / "lt_fp32_unsharded.stdout.log").read_bytes().splitlines(keepends=True)
    out = []
    for i, line in enumerate(source):
        out += [line, b"progress: caf\xe9 step %d\n" % i, b"[cublasLt] odd line %d\n" % i]  # a warning, an error
    mixed = tmp_path / "mixed.log"
    mixed.write_bytes(b"".join(out))
    one = _same_with_pieces(runner, monkeypatch, mixed, ["summary", "-q"])
    assert "more problems" in one.stderr
    text = (GENERATED / "lt_fp32_unsharded.stdout.log").read_text().splitlines(keepends=True)
    tagged = tmp_path / "tagged.log"
    tagged.write_text(
        "".join(f"[cublasLt] garbled output {i}\n" for i in range(1100)) + "".join(f"[rank0]: {t}" for t in text)
    )
    one = _same_with_pieces(runner, monkeypatch, tagged, ["summary", "-f", "json"], jobs=2)
    assert json.loads(one.stdout)["summary"]["files"][0]["more_problems"] > 0
    (summary,) = blaslog.parse(str(tagged)).files
    assert len(summary.problems) == 1001 and summary.problems[-1].once  # the tag's warning, past the cap


def _wrapped(lines: list[str], width: int) -> str:
    return "".join(line[i : i + width] + "\n" for line in lines for i in range(0, max(len(line), 1), width))


@pytest.mark.parametrize(
    ("name", "width", "command", "jobs"),
    [
        ("rocblas_fp16_bench.log", 144, ["summary"], 3),
        ("rocblas_fp16_bench.log", 144, ["parse", "-f", "jsonl"], 3),
        ("lt_fp32_unsharded.stdout.log", 100, ["parse", "-f", "jsonl", "--kind", "all"], 2),
        ("lt_fp32_unsharded.stdout.log", 100, ["check", "-f", "json"], 2),
    ],
)
def test_a_log_wrapped_at_a_fixed_width_is_joined_in_every_piece(
    name, width, command, jobs, monkeypatch, runner, tmp_path
):
    """A terminal or a CI viewer cut every line at one width: one reader learns the width from the first records
    and joins the pieces of the later ones; a piece read without knowing it is read again with it."""
    path = tmp_path / "wrapped.log"
    path.write_text(_wrapped((GENERATED / name).read_text().splitlines(), width))
    one = _same_with_pieces(runner, monkeypatch, path, command, jobs)
    assert one.exit_code in (0, 1)


def test_misread_are_the_pieces_not_read_with_the_width_the_piece_before_ended_with():
    def read(read_with: int, ended: int) -> parallel.PieceRead[None]:
        return parallel.PieceRead(None, FileSummary("run.log"), ended, read_with)

    assert parallel.misread([read(0, 0), read(0, 0), read(0, 0)]) == []
    assert parallel.misread([read(0, 0), read(0, 80), read(0, 80), read(80, 80)]) == [2]
    assert parallel.misread([read(0, 120), read(0, 80), read(120, 80)]) == [1, 2]  # two widths: the last one holds
    assert parallel.misread([read(0, 0), read(80, 80)]) == [1]  # a width guessed where none was known
