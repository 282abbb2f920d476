"""The fast paths give exactly what the grammar gives: shape keys, templates bound per line shape, lines
counted without being visited, and GEMMs handed to a CompactRun without being built."""

from __future__ import annotations

import functools
import re
from dataclasses import asdict
from pathlib import Path

import pytest

import blaslog
from blaslog._fast import _c
from blaslog._fast.shapes import SHAPE, Shaper, mark
from blaslog.formats import Sniffer
from blaslog.formats.cublas import Cublas
from blaslog.inputs import Reader, text_reader
from blaslog.parse._lines import _FileParser
from blaslog.runs import CompactRun, read_run
from tests.conftest import BAD, FIXTURES, GENERATED, NVIDIA, SEED

LOGS = (
    sorted(p for p in GENERATED.glob("**/*.log*") if p.is_file())
    + sorted(SEED.glob("*.log"))
    + sorted(p for p in NVIDIA.glob("*") if p.suffix in (".log", ".txt", ".gz"))
    + sorted(p for p in BAD.glob("*") if not p.name.endswith((".expected", ".md")))
)


def _text(path):
    """The file's lines as blaslog reads them (a cut gzip file gives what is there)."""
    return "".join(line + "\n" for batch in Reader(str(path)).batches() for line in batch.lines)


def _without_cache(monkeypatch, fn):
    with monkeypatch.context() as patch:
        patch.setattr(_c, "shape_cache", False)
        return fn()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_shaper_keys_are_the_shape_mask(path):
    lines = _text(path).split("\n")
    keys = Shaper().keys(lines)
    assert all(keys[line] == SHAPE.sub(lambda m: mark(m.group(1)), line) for line in lines)


def _parser(text, events, block=4096):
    """A parser over `text` in small batches: the shapes one batch learns serve the next ones."""
    parser = _FileParser(text_reader(text, "x"), Sniffer(), "warn", events=events)
    parser.reader.block = block
    return parser


def _records(parser, lazy):
    """The parser's records, read lazily (its items, each built) or built as read."""
    from blaslog.parse import built

    return list(built(parser.items())) if lazy else list(parser.records())


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_cached_parse_equals_grammar_parse(path, events, monkeypatch):
    """Every record (all fields, places and pointers included), count and problem the same with the shape
    cache on and off; without events, the lines of known shapes are counted without being visited."""
    text = _text(path)

    def parse():
        parser = _parser(text, events)
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    assert parse() == _without_cache(monkeypatch, parse)


def _run_rows(run: CompactRun):
    return [(asdict(o.call), o.line, o.end_line, o.thread) for o in run]


@pytest.mark.parametrize("path", [p for p in LOGS if "bad" not in p.parts], ids=lambda p: p.name)
def test_compact_run_from_shapes_equals_run_from_records(path, tmp_path, monkeypatch):
    """GEMMs of a known shape go to the run unbuilt; the run reads the same as one filled with records the
    grammar built (each distinct call once, then line and thread per call); so do the records built from
    the classifying pass, and the JSON Lines written from shape pieces."""
    from blaslog.reporters.json import JsonLinesReporter
    from blaslog.views import record_row, record_rows

    text = _text(path) * 2
    parser = _parser(text, False)
    fast = parser.sink = CompactRun("x")
    fast.extend(parser.records())
    records = list(_parser(text, False).records())
    plain = _without_cache(monkeypatch, lambda: list(_parser(text, False).records()))
    assert [r.to_dict() for r in records] == [r.to_dict() for r in plain]
    assert _run_rows(fast) == _run_rows(CompactRun("x").extend(plain))
    reporter = JsonLinesReporter()
    lazy = "".join(reporter.stream_rows(record_rows(_parser(text, False).items(), shaped=True), False))
    assert lazy == "".join(reporter.stream_rows((record_row(r) for r in plain), False))
    log = tmp_path / "x.log"
    log.write_text(text)
    run, _summary = read_run(str(log))
    assert _run_rows(run) == _run_rows(_without_cache(monkeypatch, lambda: read_run(str(log)))[0])


def test_repeated_info_lines_are_not_parsed_again():
    """A free-text [Info] message (rendered back to text from its words and pairs) is cached like any shape."""
    lines = [
        f"[2026-06-06 15:31:{i % 60:02d}][cublasLt][{1000 + i}][Info][cublasLtCreate] cuBLASLt v12.9 device "
        f"#0: multiProcessorCount={100 + i} maxSharedMemPerBlock=49152"
        for i in range(50)
    ]
    parser = _FileParser(text_reader("\n".join(lines) + "\n", "<text>"), Sniffer(), "warn")
    result = blaslog.ParseResult(tuple(parser.records()), (parser.summary,))
    assert parser.cache.stats.grammar_runs == 1 and parser.cache.stats.hits == 49
    assert [r.text for r in result.records] == [line.split("] ", 1)[1] for line in lines]
    assert [r.thread for r in result.records] == [str(1000 + i) for i in range(50)]


@pytest.mark.parametrize("fmt", ["jsonl", "json", "csv"])
@pytest.mark.parametrize("caps", [False, True], ids=["", "caps"])
@pytest.mark.parametrize("kind", ["gemm", "all"])
def test_streamed_rows_from_shape_pieces_equal_whole_encodings(fmt, caps, kind, tmp_path, runner, monkeypatch):
    """`parse -f json/jsonl` writes the GEMMs of known shapes from pieces cached per shape: byte for byte
    what encoding each record whole gives (the shape cache off)."""
    from tests.test_cli import invoke

    logs = [
        GENERATED / "lt_fp32_tp4" / "blaslt_321674.log",
        GENERATED / "rocblas_fp16_trace.log",
        GENERATED / "hipblaslt_bf16_tp2_rank0.api.log",
        GENERATED / "cublas_classic_fp16.log",
    ]
    paths = []
    for log in logs:
        path = tmp_path / log.name
        path.write_text(_text(log) * 2)
        paths.append(str(path))
    new_calls = tmp_path / "new_calls.log"
    new_calls.write_text(_new_calls_text())
    paths.append(str(new_calls))
    args = ["parse", *paths, "-f", fmt, "-q", "-j", "1", "--kind", kind]
    args += ["--caps", str(GENERATED / "caps.json")] if caps else []
    fast = invoke(runner, *args).output
    plain = _without_cache(monkeypatch, lambda: invoke(runner, *args).output)
    assert fast == plain and len(fast.splitlines()) > 300


def _new_calls_text(seed: int = 0) -> str:
    """Matmul lines of a level-5 log with new sizes on every line: most written as integers are (rows from a
    template's pieces), some with a leading zero, one out of range (an unparsable line), tiles varied."""
    import random

    rng = random.Random(seed)
    lines = [line for line in _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").split("\n") if "tile=" in line]
    out = []
    for i in range(300):
        line = re.sub(
            r"(rows|cols|ld)=\d+", lambda m: f"{m.group(1)}={rng.randrange(10, 70000)}", lines[i % len(lines)]
        )
        line = re.sub(r"tile=\w+", f"tile=MATMUL_TILE_{rng.choice((64, 128, 256))}x{rng.choice((64, 128))}", line)
        if i % 17 == 5:
            line = line.replace("rows=", "rows=0", 1)
        if i == 150:
            line = line.replace("ld=", "ld=99999999999999999999999", 1)
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_shape_whose_pieces_do_not_give_its_row_back_is_encoded_whole(monkeypatch):
    """The pieces of a shape are checked against a whole encoding of its first row; when they differ (here:
    an encoder that writes each row differently), every row of that shape is encoded whole."""
    from itertools import count

    from blaslog.reporters.json import ShapeTexts, dumps
    from blaslog.views import record_rows

    text = _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")
    items = list(_FileParser(text_reader(text, "x"), Sniffer(), "warn", events=False).records())
    parser = _FileParser(text_reader(text, "x"), Sniffer(), "warn", events=False)
    rows = list(record_rows(parser.items(), shaped=True))
    assert sum(type(row).__name__ == "ShapedRows" for row in rows) > 30
    numbers = count()
    texts = ShapeTexts(lambda row: dumps({"n": next(numbers), **row}), "numbered")
    got = [texts.text(row) for row in rows]
    assert all(t.startswith('{"n": ') for t in got)
    assert [json_loads(t)["line"] for t in got] == [r.line for r in items]


def test_a_row_whose_line_comes_again_in_a_later_batch_is_kept_and_written_the_same(monkeypatch):
    """A line a batch holds once has its row written from its shape's pieces; when the line comes again (here in
    every later batch: a log read in batches that each hold one step of it), its row is kept the second time and
    then put together from the kept text: rows byte for byte those of a whole encoding, with their line numbers."""
    from blaslog.reporters.json import ShapeTexts, dumps
    from blaslog.views import record_rows

    step = _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")
    text = step * 4

    def texts_of(shaped: bool) -> tuple[ShapeTexts, list[str], list]:
        parser = _FileParser(text_reader(text, "x"), Sniffer(), "warn", events=False)
        parser.reader.block = len(step.encode())  # a batch per step: each GEMM line once a batch
        texts = ShapeTexts(dumps, "plain")
        rows = list(record_rows(parser.items(), shaped=shaped))
        return texts, [texts.text(row) for row in rows], rows

    texts, fast, rows = texts_of(True)
    assert sum(type(row).__name__ == "ShapedRows" for row in rows) >= 4
    plain = _without_cache(monkeypatch, lambda: texts_of(False)[1])
    assert "".join(fast) == "".join(plain) and len(plain) > 100
    assert texts._rows  # rows kept from their line's second batch on


def json_loads(text):
    import json

    return json.loads(text)


def test_shape_tables_stay_bounded_for_a_log_of_new_calls(monkeypatch):
    """Every table keyed by shape is emptied when it fills (KEPT entries), and parsing stays right."""
    from blaslog._fast import shapes as _shapes

    monkeypatch.setattr(_shapes, "KEPT", 40)
    lines = [
        f"[2026-06-06 15:31:42][cublasLt][{1000 + i}][Trace][cublasLtMatmul] A=0X7F{i:04X}00 "
        f"Adesc=[type=R_16F rows={64 + i} cols={32 + i % 7} ld={64 + i}] B=0X7E00 Bdesc=[type=R_16F rows={64 + i} "
        f"cols=16 ld={64 + i}] C=0X0 Cdesc=[type=R_16F rows={32 + i % 7} cols=16 ld={32 + i % 7}] D=0X7D00 "
        f"Ddesc=[type=R_16F rows={32 + i % 7} cols=16 ld={32 + i % 7}] computeDesc=[computeType=COMPUTE_32F "
        f"scaleType=R_32F transa=OP_T] algo=[algoId={i % 50} tile=MATMUL_TILE_64x64 stages=MATMUL_STAGES_16x6] "
        f"workSpace=0X0 workSpaceSizeInBytes=0 beta=0 outOfPlace=0 stream=0X0"
        for i in range(300)
    ] * 2
    parser = _FileParser(text_reader("\n".join(lines) + "\n", "x"), Sniffer(), "warn", events=False)
    run = parser.sink = CompactRun("x")
    run.extend(parser.records())
    assert len(run) == 600 and len(run.calls) == 300
    assert [o.k for o in run][:3] == [64, 65, 66] and [o.thread for o in run][-1] == "1299"
    tables = parser.cache.tables()
    assert len(tables) >= 6 and max(len(table) for table in tables) <= 40


def test_memory_of_a_streamed_run_does_not_grow_with_repeated_calls(tmp_path):
    """read_run hands repeated GEMMs to the run unbuilt: each further call costs a few bytes."""
    import tracemalloc

    block = _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")

    def size(copies: int) -> int:
        path = tmp_path / f"x{copies}.log"
        path.write_text(block * copies)
        if _c.speedups is not None:  # the memory of remembered lines as a process starts, whatever ran before
            _c.speedups.forget()
        tracemalloc.start()
        run, _ = read_run(str(path))
        current, _ = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert len(run) == 78 * copies
        return current

    small, large = size(5), size(50)
    assert (large - small) / (45 * 78) < 64  # bytes per additional call


def _stamped(lines: list[str]) -> str:
    """`lines` as a CI runner's raw log has them: a time stamp of its own before every line (GitHub Actions)."""
    return "".join(
        f"2024-01-15T10:{i // 600 % 60:02d}:{i // 10 % 60:02d}.{i:07d}Z {line}\n" for i, line in enumerate(lines)
    )


STAMPED = "a CI runner's time stamp, another on every line"
PREFIXES = ["[rank0]: ", "[rank3]:[stdout] ", "2026-06-06T15:31:42.123Z pid=77 ", STAMPED]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_lines_behind_a_launcher_prefix_parse_as_without_it(prefix, events, monkeypatch):
    """A launcher's tag before every line, or a CI runner's time stamp (the later lines then served from their
    shapes' templates with the stamp's value left out): the same records and counts with the shape cache on and
    off, and the same records as the log without the prefixes."""
    plain_text = _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")
    lines = plain_text.splitlines()
    text = _stamped(lines) if prefix == STAMPED else "".join(prefix + line + "\n" for line in lines)

    def parse(source):
        parser = _parser(source, events)
        return [r.to_dict() for r in parser.records()], parser.summary

    cached, summary = parse(text)
    plain, plain_summary = _without_cache(monkeypatch, lambda: parse(text))
    assert cached == plain and summary.to_dict() == plain_summary.to_dict()
    assert cached == parse(plain_text)[0]
    assert summary.unparsable_lines == 0 and summary.gemm_records == 78


@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_a_time_stamp_with_a_z_is_another_shape_than_one_without(events, monkeypatch):
    """ISO 8601's `Z` after a time stamp (a CI runner's) is masked with the stamp, as a kind of its own: inside a
    cuBLASLt record's header, where its grammar takes no `Z`, the line reads with the cache on as with it off
    (the bracket is other text before the record), not as served from the template of stamps without one."""
    lines = [
        f"[2024-05-22 07:22:3{i}{z}][cublasLt][65020][Api][cublasLtCreate] lightHandle=0X7FFDB5ABD8F{i}"
        for i, z in enumerate(["", "", "Z", "", "Z"])
    ]
    text = "\n".join(lines * 2) + "\n"

    def parse():
        parser = _parser(text, events, block=200)
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    cached = parse()
    assert cached == _without_cache(monkeypatch, parse)
    said = [p for p in cached[1]["problems"] if p["line"] == 3]
    assert said and "07:22:32Z" in said[0]["message"]


def test_a_prefix_is_said_once_also_where_a_batch_has_no_keys(tmp_path):
    """A prefix's kind is its SHAPE key's, also in a batch that has no keys (a byte that is not UTF-8 in it):
    stamps with and without a fraction are one kind, said once."""
    line = b"[2024-05-22 07:22:32][cublasLt][65020][Api][cublasLtCreate] lightHandle=0X7FFDB5ABD8F8"
    stamps = [b"2024-01-15T10:23:45.1Z ", b"2024-01-15T10:23:46Z "]
    for extra in (b"", b"junk \xff\n"):
        path = tmp_path / "stamped.log"
        path.write_bytes(b"".join(stamp + line + b"\n" for stamp in stamps) + extra)
        summary = blaslog.parse(str(path)).files[0]
        said = [p for p in summary.problems if "kept apart" in p.message]
        assert len(said) == 1, (extra, said)


@pytest.mark.parametrize("stamped", [False, True], ids=["tag", "time-stamp-per-line"])
def test_lines_behind_a_launcher_prefix_are_counted_without_a_visit(stamped):
    """Once a prefixed line's record shape is known, later lines of that whole-line shape are counted by the
    classifying pass, also behind a time stamp that changes on every line (its value left out)."""
    block = _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log")
    copies = 20  # more than one 4 MB batch: the first batch teaches the shapes, the later ones use them
    lines = block.splitlines() * copies
    text = _stamped(lines) if stamped else "".join("[rank0]: " + line + "\n" for line in lines)
    parser = _FileParser(text_reader(text, "x"), Sniffer(), "warn", events=False)
    visited = []
    original = parser._lines

    def spy(batch, indices, marks=None):
        indices = list(indices)
        visited.append(len(indices))
        return original(batch, indices, marks)

    parser._lines = spy
    run = parser.sink = CompactRun("x")
    run.extend(parser.records())
    assert len(run) == copies * 78 and len(visited) > 1 and sum(visited[1:]) < len(lines) / 20


def test_summary_of_runs_equals_summary_of_their_calls(monkeypatch):
    """`summary` reads counts, threads and first lines from the runs' arrays: the same rows and overview as
    going through every call."""
    from blaslog.summary import summarize, summarize_runs
    from blaslog.views import summary_report

    paths = [p for p in LOGS if "bad" not in p.parts and "rocblas_fp16" not in p.name]
    runs, files = zip(*(read_run(str(p)) for p in paths), strict=False)
    calls = [occurrence for run in runs for occurrence in run]
    caps = blaslog.load_caps(str(GENERATED / "caps.json"))
    assert summarize_runs(runs, caps=caps) == summarize(calls, caps=caps)
    fast = summary_report(None, files, caps=caps, runs=runs)
    slow = summary_report(calls, files, caps=caps)
    assert fast.to_json() == slow.to_json() and len(fast.rows) > 20


def test_lines_of_two_dialects_counted_in_one_batch_are_counted_each_as_its_own(monkeypatch):
    """The classifying pass counts a batch's known lines of several dialects (cuBLASLt and hipBLASLt [Api] lines
    taking turns) each in its own dialect, as the plain path does."""
    lt = _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").splitlines()
    hip = _text(GENERATED / "hipblaslt_bf16_tp2_rank0.api.log").splitlines()
    mixed = [line for pair in zip(lt, hip, strict=False) for line in pair]
    text = "\n".join(mixed * 3) + "\n"

    def parse():
        parser = _parser(text, events=False)
        records = [r.to_dict() for r in parser.records()]
        return records, parser.summary.to_dict(max_problems=10**6), parser.cache.stats.hits

    records, summary, hits = parse()
    assert len(summary["formats"]) == 2 and hits > len(mixed)  # both dialects, and lines counted without a visit
    assert (records, summary) == _without_cache(monkeypatch, parse)[:2]


@pytest.mark.parametrize(
    "name",
    [
        "rocblas_profile_quoted_tag.yaml.log",  # `tag: 'run 12345'`: a quoted value holding a number
        "cublas_pointer_with_note.log",  # `val=0x7f74c0001000 (dev)`: a pointer followed by a note
    ],
)
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_a_template_holding_composed_text_gives_what_a_fresh_build_gives(name, events, monkeypatch):
    """A build step can tell text composed with a volatile value (a Text) from a str without computing with it
    (`isinstance(value, str)`) and take another branch: such a shape is checked on its first record and, when
    its template does not give that record back, parsed every time, so cache on and off agree."""
    text = (Path(__file__).parent / "data" / "templates" / name).read_text() * 3

    def parse():
        parser = _parser(text, events)
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    assert parse() == _without_cache(monkeypatch, parse)


REAL = sorted((FIXTURES / "real").glob("*.log"))


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_real_logs_parse_the_same_with_the_cache_on_and_off(path, events, monkeypatch):
    """Each public log three times over, in batches of a few lines (so that later batches take every fast path:
    lines counted or marked by the classifying pass, records of several lines from a bound template, templates
    holding composed text): every record and count as with the cache off."""
    text = _text(path) * 3

    def parse():
        parser = _parser(text, events, block=2048)
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    assert parse() == _without_cache(monkeypatch, parse)


def _level5_text() -> str:
    return _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log") * 3


def test_runs_of_a_lazy_parse_build_the_records_of_a_plain_parse():
    """With every record wanted and written lazily, stretches of lines of known shapes come as ShapedRuns: built,
    they are the records a plain parse gives, in order."""
    from blaslog._fast.lazy import ShapedRun
    from blaslog.parse import Records, built

    text = _level5_text()
    items = list(_parser(text, events=True).items())
    assert all(isinstance(item, Records) for item in items)  # one type for callers, whichever way it was made
    assert {type(item).__name__ for item in items} == {"Built", "ShapedCall", "ShapedRun"}
    runs = [item for item in items if type(item) is ShapedRun]
    assert runs and sum(map(len, runs)) > len(items)  # most records come in runs
    lazy = [record.to_dict() for record in built(items)]
    assert lazy == [record.to_dict() for record in blaslog.parse_text(text, name="x").records]


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv"])
@pytest.mark.parametrize("caps", [False, True], ids=["", "caps"])
def test_a_run_is_written_as_its_rows_one_by_one(fmt, caps, generated_caps):
    """A writer given a ShapedRows writes what it writes for the run's rows one at a time, as the first rows of
    the output too (the json format writes no comma before its first row)."""
    from blaslog._fast.lazy import Built, ShapedRun
    from blaslog.reporters import get_reporter
    from blaslog.views import record_rows

    run = next(item for item in _parser(_level5_text(), events=True).items() if type(item) is ShapedRun)
    calls = [run.call(offset) for offset in range(len(run))]
    assert len(run) > 2
    reporter, caps = get_reporter(fmt), generated_caps if caps else None
    for first in (True, False):
        as_run = "".join(reporter.stream_rows(record_rows([run], caps, reporter.shaped_rows), first))
        as_rows = "".join(reporter.stream_rows(record_rows(calls, caps, reporter.shaped_rows), first))
        built = "".join(reporter.stream_rows(record_rows([Built(c.record()) for c in calls], caps), first))
        assert as_run == as_rows == built and as_run.count("\n") >= len(run)


@pytest.mark.parametrize("path", LOGS + REAL, ids=lambda p: p.name)
def test_every_record_written_lazily_is_what_a_plain_parse_gives(path):
    """Every bundled and real log, read twice over in small batches (the second reading meets every shape
    again), through the lazy path that `parse --kind all` takes: built, its items are the plain parse's records,
    and the summaries agree."""
    from blaslog.parse import built

    text = _text(path) * 2
    lazy = _parser(text, events=True)
    records = [record.to_dict() for record in built(lazy.items())]
    plain = blaslog.parse_text(text, name="x")
    assert records == [record.to_dict() for record in plain.records]
    assert lazy.summary.to_dict(max_problems=10_000) == plain.files[0].to_dict(max_problems=10_000)


def _classic_mutations() -> dict[str, str]:
    """A cuBLAS classic log (records of many `i!` lines) three times over, and as real logs alter it."""
    text = _text(GENERATED / "cublas_classic_fp16.log") * 3
    lines = text.split("\n")[:-1]
    padded = list(lines)
    pointer = "0x0x55a178c7a2a0"
    for i, line in enumerate(padded):  # records whose second line is as long as their first (a longer pointer)
        if line.startswith("I! cuBLAS") and i > len(lines) * 2 // 3 and pointer in padded[i + 1]:
            padded[i + 1] = padded[i + 1].replace(pointer, pointer + "a" * (len(line) - len(padded[i + 1])))
            assert len(padded[i + 1]) == len(line)
    extra = list(lines)
    extra.insert(len(lines) * 2 // 3, "i!  extra: type=int; val=7")  # a record one line longer than its kind
    cut = [line for i, line in enumerate(lines) if not (i % 97 == 0 and line.startswith("i!"))]
    other = "[2026-06-06 15:30:06][cublasLt][321377][Api][cublasLtMatrixLayoutDestroy] matLayout=0X55A18E856680"
    return {
        "plain": text,
        "another library's lines between": "".join(
            line + "\n" + (other + "\n" if i % 13 == 5 else "") for i, line in enumerate(lines)
        ),
        "prints between lines": "".join(
            line + "\n" + ("step 1 loss 2.5\n" if i % 7 == 3 else "") for i, line in enumerate(lines)
        ),
        "launcher tags": "".join(f"[rank{i % 2}]: {line}\n" for i, line in enumerate(lines)),
        "tag on every line": "".join(f"[rank0]: {line}\n" for line in lines),
        "crlf": text.replace("\n", "\r\n"),
        "cut at 80 columns": "".join(
            "".join(line[i : i + 80] + "\n" for i in range(0, max(len(line), 1), 80)) for line in lines
        ),
        "second line as long as the first": "".join(line + "\n" for line in padded),  # in the last third
        "an extra line in one record": "".join(line + "\n" for line in extra),
        "lines missing": "".join(line + "\n" for line in cut),
        "no line end at the end": text[: len(text) * 3 // 4 - 5],
    }


#: Where the one-step path is declined: a launcher's tag before a record's first line, lines seen cut at a width.
_DECLINED = ("launcher tags", "tag on every line", "cut at 80 columns")


@pytest.mark.parametrize("name", list(_classic_mutations()))
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
@pytest.mark.parametrize("block", [2048, 1 << 16])
def test_records_of_several_lines_taken_in_one_step_are_those_assembled_line_by_line(name, events, block, monkeypatch):
    """A cuBLAS record whose lines have the SHAPE keys of a record read before is taken in one step
    (`_FileParser._follow`): every record, count and problem is what assembling it line by line gives, on logs
    with prints or another library's lines between the lines and records cut in batches; and the path is taken
    where it can be, and declined where it must be (launcher tags, wrapped lines, a record whose second line is
    as long as its first)."""
    mutations = _classic_mutations()

    def parse(text):
        parser = _parser(text, events, block=block)
        found = [r.to_dict() for r in parser.records()]
        return found, parser.summary.to_dict(max_problems=10**6), parser.cache.stats

    records, summary, stats = parse(mutations[name])
    with monkeypatch.context() as patch:
        patch.setattr(Cublas, "assembles_by_shape", False)
        line_by_line, summary_line_by_line, plain_stats = parse(mutations[name])
    assert plain_stats.followed == 0
    assert (records, summary) == (line_by_line, summary_line_by_line)
    if name in _DECLINED:
        assert stats.followed == 0
    elif name != "prints between lines":  # a print inside most records: few are taken whole
        assert stats.followed > 10  # records of the second and third copies
        assert stats.visited < plain_stats.visited
    if name == "second line as long as the first":  # those records are assembled line by line
        assert stats.followed < parse(mutations["plain"])[2].followed


def test_tables_of_records_taken_in_one_step_stay_bounded(monkeypatch):
    """The parser's tables of records of several lines (their lines' keys, the lengths that follow a first line,
    lines sniffed once) are emptied when they fill, as the shape tables are, and the records stay right."""
    from blaslog._fast import shapes as _shapes

    monkeypatch.setattr(_shapes, "KEPT", 40)
    lines = _text(GENERATED / "cublas_classic_fp16.log").split("\n")
    first = lines.index(next(line for line in lines if "cublasGemmEx(" in line))
    record = lines[first : next(i for i in range(first, len(lines)) if "COMPILED WITH" in lines[i]) + 1]
    text = "".join(  # 150 kinds of record, each of its own first line (the version) and size (m)
        "\n".join(line.replace("val=3072", f"val={3000 + m}").replace("(v12.9.3)", f"(v12.{m}.3)") for line in record)
        + "\n"
        for m in range(150)
        for _ in range(3)
    )

    def parse():
        parser = _parser(text, False, block=1 << 16)
        return [r.to_dict() for r in parser.records()], parser

    records, parser = parse()
    with monkeypatch.context() as patch:
        patch.setattr(Cublas, "assembles_by_shape", False)
        line_by_line, _ = parse()
    assert records == line_by_line and len(records) == 450
    assert {r["m"] for r in records} == set(range(3000, 3150))
    assert parser.cache.stats.followed > 100
    assert max(map(len, (parser.follow.records, parser.follow.spans, parser._sniffed))) <= 40
    assert len({r["version"] for r in records}) == 150


# -- families: VOLATILE shapes that differ only in their words --------------------------------------------------

_LOGGER_LOGS = [p for p in LOGS + REAL if "cublaslt" in p.name.lower() or "hipblaslt" in p.name.lower()]


def _word_variants(text: str, seed: int = 0) -> str:
    """`text` followed by copies of its lines with their words (``LogFormat.words``) swapped for other words:
    those printed at the same key elsewhere in the text, and made-up ones of letters and digits."""
    import random
    import re

    from blaslog.formats._logger import _WORD

    rng = random.Random(seed)
    lines = text.split("\n")
    seen: dict[str, set[str]] = {}
    key_of = re.compile(r"([^\s=\[\]|]+)=$")
    for line in lines:
        for match in _WORD.finditer(line):
            key = key_of.search(line, 0, match.start(1))
            seen.setdefault(key.group(1) if key else "", set()).add(match.group(1))
    out = []
    for line in lines:
        matches = list(_WORD.finditer(line))
        for _ in range(3 if matches else 0):
            pieces, at = [], 0
            for match in matches:
                key = key_of.search(line, 0, match.start(1))
                pool = sorted(seen[key.group(1) if key else ""])
                word = rng.choice(pool) if rng.random() < 0.6 else f"X{rng.randrange(10**6)}_{rng.choice('ABZ')}"
                pieces += [line[at : match.start(1)], word]
                at = match.end(1)
            out.append("".join(pieces) + line[at:])
    return text + "\n" + "\n".join(out) + "\n"


@pytest.mark.parametrize("path", _LOGGER_LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_shapes_made_from_their_familys_template_are_what_the_grammar_gives(path, events, monkeypatch):
    """cuBLASLt and hipBLASLt lines whose enum words (`R_16F`, `MATMUL_TILE_128x128`) are swapped for others give,
    from their family's template and without the grammar, every record, count and problem the grammar gives."""
    text = _word_variants(_text(path))

    def parse():
        parser = _parser(text, events, block=2048)
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    assert parse() == _without_cache(monkeypatch, parse)


def test_a_log_of_new_enum_words_runs_the_grammar_once_per_family(monkeypatch):
    """Matmul lines that differ in their tiles, stages and types: one grammar run for the family, every other shape
    made from its template; a word the build step computes with stays in the family's key."""
    base = next(line for line in _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").split("\n") if "tile=" in line)
    tiles = [f"MATMUL_TILE_{a}x{b}" for a in (32, 64, 128, 256) for b in (32, 64, 128, 256)]
    types = ["R_16F", "R_16BF", "R_32F", "R_8F_E4M3"]
    lines = []
    for i, (tile, kind) in enumerate((t, k) for t in tiles for k in types):
        line = re.sub(r"tile=\w+", f"tile={tile}", base)
        lines.append(re.sub(r"(Adesc=\[type=)\w+", rf"\g<1>{kind}", line).replace("rows=", f"rows={i + 10}", 1))
    text = "\n".join(lines) + "\n"

    def parse():
        parser = _parser(text, True)
        return [r.to_dict() for r in parser.records()], parser.cache.stats

    records, stats = parse()
    assert records == _without_cache(monkeypatch, parse)[0]
    assert {r["tile"] for r in records} == set(tiles) and {r["a_type"] for r in records} == set(types)
    assert stats.grammar_runs == 1 and stats.derived == len(lines) - 1


def test_a_word_the_build_step_computes_with_stays_in_the_familys_key(monkeypatch):
    """A build step that reads a word (here: a tile's first size decides a field) makes the family keep it: its
    template is made once per value of that word, and every record is still what the grammar gives."""
    from blaslog.formats import _logger

    real = _logger.matmul_fields

    def reading_the_tile(pairs, warnings):
        out = real(pairs, warnings)
        out["custom_option"] = 1 if out["tile"] == "MATMUL_TILE_64x64" else 0
        return out

    monkeypatch.setattr(_logger, "matmul_fields", reading_the_tile)
    base = next(line for line in _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").split("\n") if "tile=" in line)
    tiles = ["MATMUL_TILE_64x64", "MATMUL_TILE_128x64", "MATMUL_TILE_64x128"]
    text = "".join(
        re.sub(r"tile=\w+", f"tile={tile}", base).replace("type=R_32F", f"type={kind}", 1) + "\n"
        for tile in tiles
        for kind in ("R_32F", "R_16F", "R_16BF")
    )

    def parse():
        parser = _parser(text, True)
        return [r.to_dict() for r in parser.records()], parser.cache.stats

    records, stats = parse()
    assert records == _without_cache(monkeypatch, parse)[0]
    assert [r["custom_option"] for r in records] == [1] * 3 + [0] * 6
    assert stats.grammar_runs == 3 and stats.derived == 6  # one template per tile, the types made from it


def test_a_word_read_by_its_type_alone_makes_no_family(monkeypatch):
    """A build step can tell a word's slot from a str without computing with it (`isinstance`): the family's
    template is checked against the grammar's record on its first shape and, as it differs, not used."""
    from blaslog.formats import _logger

    real = _logger.matmul_fields

    def by_type(pairs, warnings):
        out = real(pairs, warnings)
        out["custom_option"] = 1 if isinstance(out["tile"], str) else 0
        return out

    monkeypatch.setattr(_logger, "matmul_fields", by_type)
    base = next(line for line in _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").split("\n") if "tile=" in line)
    text = "".join(re.sub(r"tile=\w+", f"tile=MATMUL_TILE_{n}x64", base) + "\n" for n in (32, 64, 128, 256))

    def parse():
        parser = _parser(text, True)
        return [r.to_dict() for r in parser.records()], parser.cache.stats

    records, stats = parse()
    assert records == _without_cache(monkeypatch, parse)[0]
    assert {r["custom_option"] for r in records} == {1}
    assert stats.derived == 0 and stats.grammar_runs == 4


def _skeleton(tree):
    """A tree with each token replaced by its type."""
    from lark import Tree

    return (tree.data, tuple(_skeleton(c) if isinstance(c, Tree) else c.type for c in tree.children))


def test_a_word_is_one_token_of_the_same_type_whatever_word_it_is():
    """What LogFormat.words promises of kv.lark: lines whose VOLATILE shapes differ only in their words parse to
    trees of one skeleton (the same rules and token types), so one template serves them all."""
    from blaslog._fast.shapes import mask
    from blaslog.formats._logger import _WORD
    from blaslog.formats.cublaslt import CublasLt
    from blaslog.formats.hipblaslt import HipblasLt

    skeletons: dict[tuple[object, str], object] = {}
    checked = 0
    text = "".join(_word_variants(_text(path), seed=1) for path in _LOGGER_LOGS)
    for line in text.split("\n"):
        fmt = next((f for f in (CublasLt(), HipblasLt()) if f.start.match(line)), None)
        if fmt is None or not _WORD.search(mask(line)[0]):
            continue
        try:
            tree = fmt.parser().parse(line)
        except Exception:
            continue
        family = (type(fmt), _WORD.sub("\x01", mask(line)[0]))
        if family in skeletons:
            assert _skeleton(tree) == skeletons[family], line
            checked += 1
        else:
            skeletons[family] = _skeleton(tree)
    assert checked > 1000 and len({fmt for fmt, _ in skeletons}) == 2


def _matmul_line() -> str:
    return next(line for line in _text(GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").split("\n") if "tile=" in line)


@pytest.mark.parametrize(
    "edits",
    [
        # a key the build files by what its value looks like: a number in `extra`, a pointer in `pointers`
        [[(" stream=", f" note={value} stream=")] for value in ("10", "0X1A", "11", "0X2B", "12", "0x3c")],
        # two values out of range in one record: the error names the one the grammar's reading meets first
        [[("rows=", "rows=99999999999999999999"), ("cols=", "cols=99999999999999999999")]] * 3,
        [[("rows=", "rows=0")], [("rows=", "rows=99999999999999999999"), ("cols=", "cols=9999999999999999999")]] * 2,
    ],
    ids=["number-then-pointer", "two-out-of-range", "leading-zero-then-out-of-range"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["built", "lazy"])
def test_records_of_one_shape_whose_values_differ_in_kind_or_range_read_as_the_grammar_reads_them(
    edits, lazy, monkeypatch
):
    """One VOLATILE shape holds a number in one record and a pointer in the next (the build step files them
    apart), or values out of range: every record, error and count is what the grammar gives."""
    text = ""
    for line_edits in edits * 2:
        line = _matmul_line()
        for old, new in line_edits:
            line = line.replace(old, new, 1)
        text += line + "\n"

    def parse():
        parser = _parser(text, True)
        return [r.to_dict() for r in _records(parser, lazy)], parser.summary.to_dict(max_problems=10**6)

    records, summary = parse()
    assert (records, summary) == _without_cache(monkeypatch, parse)
    assert records or summary["unparsable_lines"]


_HEAD = "[2026-06-06 15:31:4{}][cublasLt][{}][Api][cublasLtMatmulDescCreate] "


@pytest.mark.parametrize(
    "lines",
    [
        # a time stamp where the shape's earlier lines had a pointer: the grammar reads `matmulDesc=2026-06-06`
        # and free text after it, not a pointer of two words
        [_HEAD.format(i, 321674) + f"matmulDesc=0X7FFC7F88AB0{i} computeType=COMPUTE_32F" for i in range(3)]
        + [_HEAD.format(5, 321674) + "matmulDesc=2026-06-06 15:31:41 computeType=COMPUTE_32F"],
        # a pointer where the logger's thread id goes: the grammar refuses the line
        [_HEAD.format(i, 321674 + i) + "matmulDesc=0X7FFC7F88AB00 computeType=COMPUTE_32F" for i in range(3)]
        + [_HEAD.format(5, "0x1f") + "matmulDesc=0X7FFC7F88AB00 computeType=COMPUTE_32F"],
    ],
    ids=["time-stamp-for-pointer", "pointer-for-thread-id"],
)
@pytest.mark.parametrize("events", [False, True], ids=["gemms", "all"])
@pytest.mark.parametrize("lazy", [False, True], ids=["built", "lazy"])
def test_a_value_of_another_kind_in_a_known_shape_reads_as_the_grammar_reads_it(lines, events, lazy, monkeypatch):
    """Shapes differ by their values' kinds (a key holds a NUL and the kind's letter for each value): a line
    whose value at some place is of another kind than its shape's earlier lines is not read by their template."""

    text = "\n".join(lines * 2) + "\n"

    def parse():
        parser = _parser(text, events)
        return [r.to_dict() for r in _records(parser, lazy)], parser.summary.to_dict(max_problems=10**6)

    assert parse() == _without_cache(monkeypatch, parse)


_OTHER_KINDS = (
    lambda rng: f"0x{rng.randrange(16, 1 << 40):x}",
    lambda rng: f"0X{rng.randrange(16, 1 << 40):X}",
    lambda rng: f"0x0x{rng.randrange(16, 1 << 40):x}",
    lambda rng: f"2026-06-06 15:31:{rng.randrange(60):02d}",
    lambda rng: f"2026-06-06T15:31:{rng.randrange(60):02d}.{rng.randrange(1000)}",
    lambda rng: str(rng.randrange(10, 100_000)),
    lambda rng: f"{rng.randrange(100)}.{rng.randrange(100)}",
)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_values_swapped_for_other_kinds_read_as_the_grammar_reads_them(path, monkeypatch):
    """Each line of a bundled log followed, half the time, by a copy with one volatile value swapped for one of
    another kind (pointer, time stamp with or without a space, whole or decimal number) and the line again:
    every record, error and count is what the grammar gives line by line."""
    import random

    from blaslog._fast.shapes import VOLATILE

    rng = random.Random(path.name)
    lines = []
    for line in _text(path).split("\n")[:150]:
        lines.append(line)
        spans = [match.span(1) for match in VOLATILE.finditer(line)]
        if spans and rng.random() < 0.5:
            start, end = rng.choice(spans)
            lines += [line[:start] + rng.choice(_OTHER_KINDS)(rng) + line[end:], line]
    text = "\n".join(lines) + "\n"

    def parse(events, lazy):
        parser = _parser(text, events)
        return [r.to_dict() for r in _records(parser, lazy)], parser.summary.to_dict(max_problems=10**6)

    for events, lazy in ((True, True), (True, False), (False, False)):
        assert parse(events, lazy) == _without_cache(monkeypatch, functools.partial(parse, events, lazy))
