"""What is no record is settled once: the sniffer's signs and its memory of lines, and the grammar's answers kept by
text (a negative cache for the records it rejects), give exactly what sniffing every line and running the grammar
on every record give: the same records, counts, problems and warnings, on logs that repeat their foreign and
unparsable lines many times over, mutated the ways real logs are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from blaslog._fast import _c
from blaslog.formats import Sniffer, format_classes
from blaslog.inputs import text_reader
from blaslog.parse import _FileParser, built
from tests.conftest import BAD, FIXTURES, GENERATED, NVIDIA, SEED

CORPUS = (
    sorted((FIXTURES / "real").glob("*.log"))
    + sorted((FIXTURES / "gpu").rglob("*.log"))
    + sorted(NVIDIA.glob("*.log"))
    + sorted(SEED.glob("*.log"))
    + sorted(GENERATED.glob("**/*.log"))
    + sorted(p for p in BAD.glob("*.log") if p.is_file())
)

PRINTS = (
    "step {n} loss=3.{n:04d} dt=512.0ms",  # a program's own line, new every time
    "hello from the training loop",  # the same foreign line, again and again
    "",
    "[...]",
    "i!  m: type=int; val=1024",  # a cuBLAS `i!` line outside a record: unparsable
    "[2026-01-01 10:00:00][cublasLt][77][Trace] garbage without a function",  # looks like cuBLASLt output
    "rocblas_sgemm,N,T,1,2,",  # a rocBLAS trace line cut short
    "I! cuBLAS (v12.0) function cublasStatus_t cublasSgemm_v2(...) called:",  # a header with no lines after it
)


class _Plain(Sniffer):
    """The sniffer as it was: every dialect's `start` searched in every line, nothing remembered."""

    def sniff(self, line: str):  # type: ignore[no-untyped-def]
        return self._search(self._start, line)

    def near_miss(self, line: str) -> bool:
        return self._near_miss.search(line) is not None


def _corpus() -> str:
    texts = [path.read_text(encoding="utf-8", errors="replace") for path in CORPUS]
    return "".join(text if text.endswith("\n") else text + "\n" for text in texts)


def _printed(text: str) -> str:
    """A program's prints between the lines, some new every time, most the same ones again."""
    out = []
    for n, line in enumerate(text.splitlines()):
        out.append(line)
        if n % 7 == 3:
            out.append(PRINTS[n % len(PRINTS)].format(n=n))
    return "\n".join(out) + "\n"


def _tagged(text: str) -> str:
    return "".join(f"[rank0]: {line}\n" for line in text.splitlines())


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _cut(text: str) -> str:
    """The writer killed inside its last line: no line end, the line cut in half."""
    body = text.rstrip("\n")
    last = body.rsplit("\n", 1)[-1]
    return body[: len(body) - len(last) // 2]


MUTATIONS = {
    "plain": lambda text: text,
    "prints": _printed,
    "tags": _tagged,
    "crlf": _crlf,
    "cut-last-line": _cut,
    "all": lambda text: _cut(_crlf(_tagged(_printed(text)))),
}


def _parse(text: str, sniffer: Sniffer, events: bool) -> tuple[list[dict], dict, object]:
    parser = _FileParser(text_reader(text, "x.log"), sniffer, "warn", events=events)
    parser.reader.block = 1 << 15  # many batches: what one batch settles serves the next ones
    records = [record.to_dict() for record in built(parser.items())]
    return records, parser.summary.to_dict(max_problems=10**6), parser.cache.stats


@pytest.fixture(scope="module")
def corpus() -> str:
    return _corpus() * 2


@pytest.mark.parametrize("events", [True, False], ids=["all-records", "gemms-only"])
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_negative_cache_gives_what_the_uncached_parse_gives(corpus, mutation, events, monkeypatch):
    """Records, line accounting, problems and warnings the same with what is not a record cached (by text) and
    with every line sniffed and every record through the grammar; the cached parse does spare work."""
    text = MUTATIONS[mutation](corpus)
    cached = _parse(text, Sniffer(), events)
    with monkeypatch.context() as patch:
        patch.setattr(_c, "shape_cache", False)
        plain = _parse(text, _Plain(), events)
    assert cached[0] == plain[0]
    assert cached[1] == plain[1]
    summary = cached[1]
    assert summary["lines"] == (
        summary["record_lines"] + summary["foreign_lines"] + summary["unparsable_lines"]
    ) or "shared" in str(summary), summary
    assert summary["unparsable_lines"] > 0 and summary["foreign_lines"] > 0
    stats = cached[2]
    assert stats.recalled > 0, stats  # records the grammar rejected, or read whole, were known by their text
    assert stats.grammar_runs < plain[2].grammar_runs


def test_every_line_counted(corpus):
    """The accounting invariant on the repeated corpus with prints between its lines."""
    _records, summary, _stats = _parse(_printed(corpus), Sniffer(), True)
    assert summary["lines"] == summary["record_lines"] + summary["foreign_lines"] + summary["unparsable_lines"]


def _lines() -> list[str]:
    lines = _corpus().splitlines()
    out = []
    for line in lines[:4000] + [p.format(n=1) for p in PRINTS]:
        out += [line, f"[rank3]: {line}", f"0: {line}", f"[1,0]<stdout>:{line}", line.lower(), line[3:], line[:40]]
    return out


def _named(found: tuple[object, int] | None) -> tuple[str, int] | None:
    return None if found is None else (found[0].name, found[1])  # type: ignore[attr-defined]


def test_sniffer_finds_what_every_start_finds():
    """The signs-first sniffer, remembering lines, answers what searching every dialect's `start` answers, on
    every line of the corpus, tagged, cut and lower-cased; asked twice (the second answer from its memory)."""
    fast, plain = Sniffer(), _Plain()
    lines = _lines()
    for _ in range(2):
        for line in lines:
            assert _named(fast.sniff(line)) == _named(plain.sniff(line)), line
            assert fast.near_miss(line) == plain.near_miss(line), line


@pytest.mark.parametrize("cls", format_classes(), ids=lambda cls: cls.name)
def test_each_start_match_holds_a_sign(cls):
    """A line a dialect's `start` finds a record in holds one of its `start_signs` (what the sniffer's first pass
    looks for), on the corpus and around each match."""
    assert cls.start_signs, f"{cls.name} declares no start_signs: the sniffer searches its start in every line"
    found = 0
    for line in _lines():
        match = cls.start.search(line)
        if match is not None:
            found += 1
            assert any(sign in line for sign in cls.start_signs), (cls.name, line)
    assert found or cls.name in {"mkl"}, f"no line of the corpus begins a {cls.name} record"


def test_a_dialect_without_signs_is_searched_on_every_line():
    """A dialect registered without `start_signs` (a plug-in's) turns the first pass off: its records are found."""
    from blaslog.formats import registered
    from blaslog.formats.mkl import MklVerbose

    class Toy(MklVerbose):
        name = "toy-nosigns"
        start = re.compile(r"TOYGEMM ")
        start_signs = None
        boundary = None
        logging = None

    with registered(Toy):
        sniffer = Sniffer()
        found = sniffer.sniff("TOYGEMM 1 2 3")
        assert found is not None and found[0].name == "toy-nosigns"
        assert sniffer.sniff("MKL_VERBOSE SGEMM(N,N,2,2,2)") is not None


def test_paths_exist():
    assert all(Path(path).is_file() for path in CORPUS) and len(CORPUS) > 50


@pytest.mark.parametrize("width", [70, 73, 84])
def test_records_taken_by_shape_once_a_wrap_width_is_known(width, monkeypatch):
    """After a record cut at a fixed width (the width is then known), cuBLAS records are still taken in one step
    by their lines' SHAPE keys, except where a line but the last is that wide (70: the `handle` line, 84: the
    `Time` line, which the next line could continue as a piece): the same records and counts as line by line."""
    trace = next(
        line
        for line in (GENERATED / "lt_fp32_tp4" / "blaslt_321674.log").read_text().splitlines()
        if "[Trace]" in line and len(line) > 4 * width
    )
    classic = (GENERATED / "cublas_classic_fp16.log").read_text()
    text = "".join(trace[at : at + width] + "\n" for at in range(0, len(trace), width)) + classic * 3

    def parse() -> tuple[list[dict], dict, _FileParser]:
        parser = _FileParser(text_reader(text, "x.log"), Sniffer(), "warn", events=True)
        records = [record.to_dict() for record in parser.records()]
        return records, parser.summary.to_dict(max_problems=10**6), parser

    records, summary, parser = parse()
    with monkeypatch.context() as patch:
        patch.setattr(_c, "shape_cache", False)
        plain = parse()
    assert parser.wrap_width == width and plain[2].wrap_width == width
    assert (records, summary) == plain[:2]
    taken = parser.cache.stats.followed
    assert (taken == 0) if width in (70, 84) else (taken > 50), taken
