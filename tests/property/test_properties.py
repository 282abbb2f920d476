"""Property tests (hypothesis): round trips of the logger message syntax; no input crashes any grammar or the CLI."""

from __future__ import annotations

import contextlib
import os
import string

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import blaslog
from blaslog.cli import cli
from blaslog.formats import FORMAT_CLASSES
from blaslog.formats._base import RecordError
from tests.conftest import GENERATED, NVIDIA, SEED

pytestmark = pytest.mark.property

# CI runs a bounded number of examples; a longer fuzz run (on the benchmark machine) multiplies them:
#   BLASLOG_FUZZ_SCALE=200 python -m pytest tests/property -p no:cacheprovider
SCALE = int(os.environ.get("BLASLOG_FUZZ_SCALE", "1"))

KEY = st.text(string.ascii_letters + string.digits + "_", min_size=1, max_size=12).filter(lambda k: k[0].isalpha())
SCALAR = st.text(string.ascii_letters + string.digits + "_.:?-+/#*", min_size=1, max_size=16)
POINTER = st.integers(min_value=1, max_value=2**48).map(lambda v: f"0X{v:X}")
VALUE = st.one_of(SCALAR, POINTER)
GROUP = st.lists(st.tuples(KEY, VALUE), min_size=1, max_size=5)
PAIRS = st.lists(st.tuples(KEY, st.one_of(VALUE, GROUP)), min_size=1, max_size=8, unique_by=lambda kv: kv[0])


def _render(pairs) -> str:
    parts = []
    for key, value in pairs:
        if isinstance(value, list):
            value = "[" + " ".join(f"{k}={v}" for k, v in value) + "]"
        parts.append(f"{key}={value}")
    return " ".join(parts)


def _flatten(pairs):
    out = []
    for key, value in pairs:
        if isinstance(value, list):
            out.extend((f"{key}.{k}", v) for k, v in value)
        else:
            out.append((key, value))
    return tuple(out)


@settings(max_examples=150 * SCALE, deadline=None)
@given(pairs=PAIRS, tid=st.integers(1, 10**7), level=st.sampled_from(["Api", "Info", "Hint", "Debug"]))
def test_logger_messages_round_trip(pairs, tid, level):
    line = f"[2024-05-22 07:22:32][cublasLt][{tid}][{level}][cublasLtSomething] {_render(pairs)}\n"
    result = blaslog.parse_text(line)
    (record,) = result.records
    assert record.thread == str(tid) and record.level == level
    assert record.fields == _flatten(pairs)
    assert result.files[0].unparsable_lines == 0


@settings(max_examples=60 * SCALE, deadline=None)
@given(pairs=PAIRS, tid=st.integers(1, 10**7))
def test_round_trip_is_stable_through_the_shape_cache(pairs, tid):
    """The same shape twice with other pointers and thread: the second comes from the cache, equally right."""
    first = f"[2024-05-22 07:22:32][cublasLt][{tid}][Api][f] {_render(pairs)} p=0X1234\n"
    second = first.replace(f"[{tid}]", f"[{tid + 1}]").replace("p=0X1234", "p=0XABCD")
    a, b = blaslog.parse_text(first + second).records
    assert a.fields[:-1] == b.fields[:-1] == _flatten(pairs)
    assert (a.thread, dict(a.fields)["p"], b.thread, dict(b.fields)["p"]) == (
        str(tid),
        "0X1234",
        str(tid + 1),
        "0XABCD",
    )


def _real_lines():
    lines = []
    for path in [
        SEED / "sharded_joined.log",
        NVIDIA / "cublaslt_12.9.3_level5_api_error_nogpu.log",
        GENERATED / "rocblas_fp16_trace.log",
        GENERATED / "rocblas_fp16_bench.log",
        GENERATED / "rocblas_fp16_profile.yaml",
        GENERATED / "hipblaslt_bf16_tp2_rank0.bench.log",
        GENERATED / "cublas_classic_fp16.log",
    ]:
        lines.extend(path.read_text().splitlines()[:40])
    lines.extend(line for line in (GENERATED / "hipblaslt_bf16_tp2_rank0.api.log").read_text().splitlines()[:30])
    return lines


REAL = _real_lines()


@st.composite
def mutated(draw):
    line = draw(st.sampled_from(REAL))
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["delete", "insert", "truncate", "duplicate"]))
        if not line:
            break
        at = draw(st.integers(0, len(line) - 1))
        if op == "delete":
            line = line[:at] + line[at + 1 :]
        elif op == "insert":
            line = line[:at] + draw(st.sampled_from([*list("[]=,|{}:;' \"\\\x00\t"), "0x", "i!", "::"])) + line[at:]
        elif op == "truncate":
            line = line[:at]
        else:
            line = line[:at] + line[at : at + 20] + line[at:]
    return line


@settings(max_examples=400 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(mutated(), st.text(max_size=300)))
def test_no_grammar_raises_anything_but_its_own_errors(text):
    from lark.exceptions import LarkError

    for cls in FORMAT_CLASSES:
        fmt = cls()
        with contextlib.suppress(LarkError, RecordError):
            fmt.parse(text, "x", 1, 1)


@settings(max_examples=150 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(st.one_of(mutated(), st.text(max_size=120)), max_size=8))
def test_pipeline_accounts_for_every_line(lines):
    text = "\n".join(lines) + "\n"
    result = blaslog.parse_text(text)
    summary = result.files[0]
    assert summary.balanced()
    assert summary.lines == text.count("\n")  # only \n ends a line, whatever else the text holds


@settings(max_examples=60 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(mutated(), min_size=1, max_size=5),
    command=st.sampled_from(["parse", "check", "summary"]),
    fmt=st.sampled_from(["table", "json", "csv", "github", "sarif", "junit"]),
)
def test_cli_never_shows_a_traceback(lines, command, fmt, tmp_path_factory):
    from click.testing import CliRunner

    path = tmp_path_factory.mktemp("fuzz") / "fuzz.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    result = CliRunner().invoke(cli, [command, str(path), "-f", fmt])
    assert result.exit_code in (0, 1, 2), result.output
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


@settings(max_examples=300 * SCALE, deadline=None)
@given(text=st.one_of(mutated(), st.text(alphabet=string.digits + "xX[]-: .(,=abcdefABCDEF", max_size=80)))
def test_every_block_shape_match_is_a_volatile_match(text):
    """SHAPE (used on whole blocks) masks a subset of what VOLATILE masks, at the same spans: equal SHAPE keys
    then mean equal shapes, which is what lets a key stand for its first line's template."""
    from blaslog._fast.shapes import SHAPE, VOLATILE

    full = {m.span(1) for m in VOLATILE.finditer(text)}
    assert {m.span(1) for m in SHAPE.finditer(text)} <= full


@settings(max_examples=300 * SCALE, deadline=None)
@given(
    lines=st.lists(
        st.one_of(mutated(), st.text(alphabet=string.digits + "xX[]-: .(,=abcdefABCDEF", max_size=80)), max_size=6
    )
)
def test_shaper_gives_the_shape_mask(lines):
    """The block keys (head and message cached apart, pointer-only mask where it suffices) are SHAPE's."""
    from blaslog._fast.shapes import SHAPE, Shaper, mark

    def key(text: str) -> str:
        return SHAPE.sub(lambda match: mark(match.group(1)), text)

    shaper = Shaper()
    keys = shaper.keys(lines + lines)
    for line in lines:
        assert keys[line] == key(line)
        assert shaper.split(line) == (key(line), SHAPE.findall(line))

    # a record of several lines is keyed by its lines' keys joined by line ends (parse._finish): that is SHAPE's
    # key of the joined text, with the lines' values in order (no match holds a line end, and the look-arounds
    # read a line end as they read the text's edges)
    lines = [line.replace("\n", " ") for line in lines]
    joined = "\n".join(lines)
    parts = [shaper.split(line) for line in lines]
    assert "\n".join(one for one, _ in parts) == key(joined)
    assert [value for _, values in parts for value in values] == SHAPE.findall(joined)


@settings(max_examples=100 * SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(mutated(), min_size=1, max_size=6),
    events=st.booleans(),
    prefix=st.sampled_from(["", "[rank0]: ", "[rank1]:[W] ", "12:00:01 "]),
)
@example(  # found by this test: a record left open (`[`) took the next line as its continuation when that line's
    # shape was new, while a line of a known shape began a record (now a line that begins a record never continues)
    lines=[
        "[2026-07-21 10:04:56][HIPBLASLT][51877][Api][rocblaslt_matmul_desc_create] matmulDesc[out]=0x7ffdc002bb98 x",
        "[2026-07-21 10:04:56[2026-07-21 10:04:56][HIPBLASLT][51877][Api][",
    ],
    events=False,
    prefix="[rank1]:[W] ",
)
def test_shape_cache_changes_nothing(lines, events, prefix):
    """Fuzzed lines, each twice with its pointers moved (and a launcher's tag before each, or not): the same
    records, counts and problems with the shape cache on and off."""
    import re

    from blaslog._fast import _c
    from blaslog.formats import Sniffer
    from blaslog.inputs import text_reader
    from blaslog.parse._lines import _FileParser

    lines = [prefix + line for line in lines]
    moved = [re.sub(r"0[xX][0-9a-fA-F]+", lambda m: m.group(0) + "1", line) for line in lines]
    text = "\n".join(lines + moved + moved) + "\n"

    def parse():
        parser = _FileParser(text_reader(text), Sniffer(), "warn", events=events)
        parser.reader.block = 200  # batches of a line or two: later batches use the shapes earlier ones learnt
        return [r.to_dict() for r in parser.records()], parser.summary.to_dict(max_problems=10**6)

    cached = parse()
    _c.shape_cache = False
    try:
        plain = parse()
    finally:
        _c.shape_cache = True
    assert cached == plain


_TAG_PIECES = [
    "[rank",
    "[default",
    "[",
    "]:",
    "]",
    ",",
    "<stdout>:",
    "<stderr>:",
    "<std",
    "3",
    "12",
    "\n",
    "\r\n",
    " ",
    "x",
]


@given(pieces=st.lists(st.sampled_from(_TAG_PIECES), max_size=40))
@example(pieces=["[rank", "3", "]:", "x", "\n", "[default", "12", "]:"])  # the first line's tag, and a later one
@example(
    pieces=["[", "12", ",", "3", "<stdout>:", "\r\n", " ", "[rank", "12", "]:"]
)  # an mpirun tag; not after a space
def test_launcher_tags_are_found_at_line_starts_only(pieces):
    """The ranks of launchers' tags in a file's head (blaslog.ranks.rank_from_tags, a search led by a line end) are
    those a search anchored at every line start (`^` with re.MULTILINE) finds."""
    import re

    from blaslog.ranks import rank_from_tags

    head = "".join(pieces).encode()
    anchored = re.compile(rb"^\[(?:rank|default)(\d+)\]:|^\[\d+,(\d+)\]<std(?:out|err)>:", re.MULTILINE)
    assert rank_from_tags(head) == {int(a or b) for a, b in anchored.findall(head)}


@given(
    library=st.sampled_from(["cublas", "cublasLt", "rocblas", "hipblaslt", "mkl", "other"]),
    function=st.sampled_from(
        ["cublasSgemm_v2", "cublasGemmEx", "cublasSgemmStridedBatched_64", "rocblas_gemm_ex", "SGEMM", "f_64", "x"]
    ),
)
def test_a_functions_family_is_the_same_asked_again(library, function):
    """GemmCall.family keeps what it worked out per (library, function): the same as working it out anew."""
    from blaslog.records import GemmCall, _family

    call = GemmCall(library, function, 1, 1, 1)
    assert call.family == _family.__wrapped__(library, function) == call.family
