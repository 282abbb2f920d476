"""The fast paths give exactly what the grammar gives: shape keys, templates bound per line shape, lines
counted without being visited, and GEMMs handed to a CompactRun without being built."""

from __future__ import annotations

from dataclasses import asdict

import pytest

import blaslog
from blaslog.formats import _base
from blaslog.formats._shapes import SHAPE, Shaper
from blaslog.formats import Sniffer
from blaslog.inputs import Reader, text_reader
from blaslog.parse import _FileParser
from blaslog.runs import CompactRun, read_run
from tests.conftest import BAD, GENERATED, NVIDIA, SEED

LOGS = sorted(p for p in GENERATED.glob("**/*.log*") if p.is_file()) + sorted(SEED.glob("*.log")) + sorted(
    p for p in NVIDIA.glob("*") if p.suffix in (".log", ".txt", ".gz")) + sorted(
    p for p in BAD.glob("*") if not p.name.endswith((".expected", ".md")))


def _text(path):
    """The file's lines as blaslog reads them (a cut gzip file gives what is there)."""
    return "".join(line.text + "\n" for line in Reader(str(path)).lines())


def _without_cache(monkeypatch, fn):
    with monkeypatch.context() as patch:
        patch.setattr(_base, "CACHE", False)
        return fn()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_shaper_keys_are_the_shape_mask(path):
    lines = _text(path).split("\n")
    keys = Shaper().keys(lines)
    assert all(keys[line] == SHAPE.sub("\x00", line) for line in lines)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
def test_cached_parse_equals_grammar_parse(path, events, monkeypatch):
    """Every record (all fields, places and pointers included), count and problem the same with the shape
    cache on and off; without events, the lines of known shapes are counted without being visited."""
    text = _text(path)

    def parse():
        parser = _FileParser(text_reader(text, "x"), Sniffer(), "warn", events=events)
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    assert parse() == _without_cache(monkeypatch, parse)


def _run_rows(run: CompactRun):
    return [(asdict(o.call), o.line, o.end_line, o.thread) for o in run]


@pytest.mark.parametrize("path", [p for p in LOGS if "bad" not in p.parts], ids=lambda p: p.name)
def test_compact_run_from_shapes_equals_run_from_records(path, tmp_path, monkeypatch):
    """read_run hands GEMMs of a known shape to the run unbuilt; the run reads the same as one filled with
    records the grammar built (each distinct call once, then line and thread per call)."""
    log = tmp_path / "x.log"
    log.write_text(_text(path) * 2)
    fast, fast_summary = read_run(str(log))
    plain = _without_cache(monkeypatch, lambda: read_run(str(log)))
    slow = CompactRun(str(log)).extend(blaslog.parse_file(str(log), events=False).records)
    assert _run_rows(fast) == _run_rows(slow) == _run_rows(plain[0])
    assert fast_summary.to_dict() == plain[1].to_dict()


def test_repeated_info_lines_are_not_parsed_again(monkeypatch):
    """A free-text [Info] message (rendered back to text from its words and pairs) is cached like any shape."""
    runs = []
    original = _base.LogFormat._tree
    monkeypatch.setattr(_base.LogFormat, "_tree", lambda self, text: runs.append(text) or original(self, text))
    lines = [f"[2026-06-06 15:31:{i % 60:02d}][cublasLt][{1000 + i}][Info][cublasLtCreate] cuBLASLt v12.9 device "
             f"#0: multiProcessorCount={100 + i} maxSharedMemPerBlock=49152" for i in range(50)]
    result = blaslog.parse_text("\n".join(lines) + "\n")
    assert len(runs) == 1
    assert [r.text for r in result.records] == [line.split("] ", 1)[1] for line in lines]
    assert [r.thread for r in result.records] == [str(1000 + i) for i in range(50)]
