"""The C extension (blaslog/_speedups.c) gives what the Python code gives, byte for byte: the same lines, the
same counts in the same order, the same SHAPE keys, the same batches sent to the checked path, and the same
parse of every bundled log. The rest of the suite runs with the extension where it is built; these tests run
each log both ways."""

from __future__ import annotations

import gzip
import re
import shutil
import string
import sysconfig
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blaslog
from blaslog import inputs
from blaslog._fast import _c
from blaslog._fast.shapes import SHAPE, VOLATILE, Shaper, kind_of, mask
from blaslog.inputs import LONG, Reader
from tests.conftest import FIXTURES

speedups = _c.speedups
needs_speedups = pytest.mark.skipif(speedups is None, reason="blaslog._speedups is not built (no C compiler?)")

LOGS = sorted(
    p
    for p in FIXTURES.glob("**/*")
    if p.is_file() and p.suffix in (".log", ".txt", ".gz", ".csv") and p.stat().st_size < 5_000_000
)


def _letter(value: str) -> str:
    kind = kind_of(value)
    if kind == "num":
        return "d" if "." in value else "n"
    if kind == "time" and value.endswith("Z"):  # ISO 8601's UTC: a kind of its own
        return "y" if " " in value else "z"
    return "s" if kind == "time" and " " in value else kind[0]


def _marked(pattern: re.Pattern[str], text: str) -> str:
    """The key of `text` under a mask, spelled out: each match a NUL and a letter for its kind (`d` for a
    decimal number, `s` for a time stamp with a space, `y`/`z` for one with a `Z` after it)."""
    return pattern.sub(lambda match: "\x00" + _letter(match.group(1)), text)


def _pure(patch: pytest.MonkeyPatch) -> None:
    """Everything in Python from here on (the one switch: blaslog/_fast/_c.py)."""
    patch.setattr(_c, "speedups", None)


def _batches(path: Path | str, pure: bool, monkeypatch, block: int = 4096) -> list[tuple]:
    with monkeypatch.context() as patch:
        if pure:
            _pure(patch)
        reader = Reader(str(path), block=block)
        return [
            (b.start, b.lines, None if b.shapes is None else list(b.shapes.items()), b.problems, b.counts)
            for b in reader.batches()
        ] + [(reader.ended_without_newline, reader.stream_error, reader.cr_lines)]


def test_the_extension_is_built_where_a_compiler_is():
    """A wheel built where a C compiler is holds the extension (hatch_build.py): without this test a build that
    failed quietly would leave every user on the slow path."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None or not Path(sysconfig.get_paths()["include"], "Python.h").is_file():
        pytest.skip(f"no C compiler ({compiler}) or no Python headers: the extension cannot be built here")
    assert speedups is not None, "blaslog._speedups is missing although a C compiler is here: reinstall blaslog"


@needs_speedups
@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_batches_are_the_same_with_and_without_the_extension(path, monkeypatch):
    assert _batches(path, False, monkeypatch) == _batches(path, True, monkeypatch)


@needs_speedups
@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_parse_is_the_same_with_and_without_the_extension(path, monkeypatch):
    def parse():
        result = blaslog.parse(str(path))
        return [r.to_dict() for r in result.records], [f.to_dict(max_problems=10_000) for f in result.files]

    fast = parse()
    with monkeypatch.context() as patch:
        _pure(patch)
        assert parse() == fast


#: Bytes a block of log can hold: what SHAPE looks at, line ends of three kinds, a NUL, UTF-8 of two and three
#: bytes, and bytes that are not UTF-8.
PIECES = [
    *"0123456789xX[]-: T._(abcdefgAF\t",
    "\n",
    "\r\n",
    "\r",
    "\x00",
    "é",
    "✓",
    "[2026-06-06 15:31:41]",
    "2026-06-06T15:31:41.123456",
    "2024-01-15T10:23:45.1234567Z ",  # a CI runner's stamp (GitHub Actions' raw log)
    "Z",
    "0x0x7f00",
    "0X7FFC7F88AD28",
    "[321674][",
    "[cublasLt][1234][Api][cublasLtMatmul] ",
]


@st.composite
def blocks(draw) -> bytes:
    pieces = draw(st.lists(st.sampled_from(PIECES), max_size=60))
    data = "".join(pieces).encode()
    if draw(st.booleans()):  # a byte that is not UTF-8, somewhere
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xe2\x9c"])) + data[at:]
    return data


@needs_speedups
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(head=blocks(), body=blocks(), longest=st.sampled_from([LONG, 8, 30]))
def test_a_block_gives_what_the_python_code_gives(head, body, longest):
    head = head.replace(b"\n", b" ")  # the start of a line begun in the block before
    data = body + b"\n" + b"tail without a line end"
    end = len(body) + 1
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(inputs, "LONG", longest)
        fast = Reader("x")._batch(7, data, end, head)
        _pure(patch)
        pure = Reader("x")._batch(7, data, end, head)
    assert (fast.start, fast.lines, fast.problems, fast.counts) == (pure.start, pure.lines, pure.problems, pure.counts)
    assert (None if fast.shapes is None else list(fast.shapes.items())) == (
        None if pure.shapes is None else list(pure.shapes.items())
    )


#: One line's text: pieces of log, characters the patterns look at, and runs of numbers, decimals and pointers.
TEXTS = st.one_of(
    st.lists(st.sampled_from([p for p in PIECES if p not in ("\n", "\r\n", "\r")]), max_size=40).map("".join),
    st.text(alphabet=string.digits + "xX[]-: .(,=abcdefABCDEF_gTZ", max_size=80),
    st.lists(st.sampled_from(["1", "12", "0", ".", "5.5", "0x", "-", "(", "e", " ", "0x0x", "=", "_"])).map("".join),
)


@needs_speedups
@settings(max_examples=3000, deadline=None)
@given(text=TEXTS)
def test_the_scanner_masks_what_the_shape_pattern_masks(text):
    key, values = _marked(SHAPE, text), SHAPE.findall(text)
    assert speedups.split(text) == (key, values)
    assert speedups.values(text) == values and Shaper().values(text) == values
    with pytest.MonkeyPatch.context() as patch:
        _pure(patch)
        assert Shaper().split(text) == (key, values) and Shaper().keys([text])[text] == key
        assert Shaper().values(text) == values
    data = text.encode()  # the block scanner: the same keys (a line holding a NUL goes to the checked path)
    found = speedups.lines(data + b"\n", len(data) + 1, b"", LONG)
    assert found is None if "\x00" in text else found[2] == {text: key}


@needs_speedups
@settings(max_examples=3000, deadline=None)
@given(text=TEXTS)
def test_the_volatile_scanner_masks_what_the_volatile_pattern_masks(text):
    assert speedups.mask(text) == (_marked(VOLATILE, text), VOLATILE.findall(text))


@needs_speedups
@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_bundled_line_is_masked_as_the_volatile_pattern_masks_it(path, monkeypatch):
    lines = [line for batch in Reader(str(path)).batches() for line in batch.lines]
    fast = [mask(line) for line in lines]
    _pure(monkeypatch)
    assert fast == [mask(line) for line in lines]
    assert fast == [(_marked(VOLATILE, line), VOLATILE.findall(line)) for line in lines]


def test_a_string_utf8_cannot_hold_is_masked_in_python():
    text = "[2026-06-06 15:31:41] A=0X7F \udcff"  # a lone surrogate (surrogateescape of a byte that is not UTF-8)
    if speedups is not None:
        assert speedups.split(text) is None and speedups.mask(text) is None and speedups.values(text) is None
    assert Shaper().split(text) == (_marked(SHAPE, text), SHAPE.findall(text))
    assert Shaper().values(text) == SHAPE.findall(text)
    assert mask(text) == (_marked(VOLATILE, text), VOLATILE.findall(text))


@needs_speedups
def test_equal_lines_share_one_string_and_equal_keys_one_key():
    line = b"[2026-06-06 15:31:41][cublasLt][321674][Api][cublasLtMatmul] A=0X7F00 B=0X7F10\n"
    other = line.replace(b"0X7F00", b"0X7F20")
    lines, counts, shapes = speedups.lines(line * 3 + other, 4 * len(line), b"", LONG)
    assert lines[0] is lines[1] is lines[2] and lines[3] is not lines[0]
    assert list(counts.values()) == [3, 1]
    assert shapes[lines[0]] is shapes[lines[3]]


@needs_speedups
def test_a_line_of_an_earlier_block_is_the_same_string_with_the_same_key():
    """lines() keeps the ASCII lines it decodes, with their keys, for the calls after it: a later block's equal
    line is the same str (not decoded, masked or hashed again), and its key the key the block's other lines of
    that shape share."""
    speedups.forget()
    first = b"[2026-06-06 15:31:41][cublasLt][321674][Api][cublasLtMatmul] A=0X7F00 B=0X7F10\n"
    again = first.replace(b"0X7F00", b"0X7F20")
    zero = speedups.lines(first, len(first), b"", LONG)
    assert speedups.remembered() == 0  # a line is kept the second time it is decoded
    one = speedups.lines(first, len(first), b"", LONG)
    assert speedups.remembered() == 1 and one == zero and one[0][0] is not zero[0][0]
    two = speedups.lines(again + first, 2 * len(first), b"", LONG)
    assert two[0][1] is one[0][0] and two[0][0] is not one[0][0]
    assert two[2][two[0][0]] is two[2][two[0][1]] == one[2][one[0][0]]  # one key for the call's shape
    assert speedups.remembered() == 1
    speedups.forget()
    assert speedups.remembered() == 0
    three = speedups.lines(first, len(first), b"", LONG)
    assert three[0][0] is not one[0][0] and three == one


@needs_speedups
def test_a_remembered_line_is_still_held_to_the_longest_length_and_a_non_ascii_line_is_not_kept():
    speedups.forget()
    line = b"a line of thirty characters ..\n"
    for _ in range(2):
        assert speedups.lines(line, len(line), b"", LONG) is not None
    assert speedups.remembered() == 1
    assert speedups.lines(line, len(line), b"", 29) is None  # the checked path reports it, as without memory
    accented = "d\u00e9j\u00e0 vu 0x7f00\n".encode()
    for _ in range(2):
        assert speedups.lines(accented, len(accented), b"", LONG)[0] == ["d\u00e9j\u00e0 vu 0x7f00"]
    assert speedups.remembered() == 1


@needs_speedups
def test_the_memory_rests_when_few_of_its_lines_come_again_and_is_filled_again_when_they_do():
    """Lines that never come again (new pointers every step) are not kept. Lines that come twice and no more fill
    the memory with lines of which few are found again: once full so, it is emptied and the next new lines are
    not kept. Lines that come again and again have it emptied when full and filled again at once."""

    def block(start: int, count: int) -> bytes:
        return b"".join(b"call 0x%x of a log\n" % i for i in range(start, start + count))

    speedups.forget()
    for start in range(0, 40_000, 1_000):  # every line new
        data = block(start, 1_000)
        speedups.lines(data, len(data), b"", LONG)
        # a line is noted by a 16-bit tag in a slot chosen by 16 bits of its hash (the hash is seeded per process):
        # a new line whose slot holds its tag by chance is kept, about one in 4 runs of these 40,000 lines
        assert speedups.remembered() <= 4

    held = []
    for start in range(40_000, 80_000, 1_000):  # each block twice: kept the second time, never found
        data = block(start, 1_000)
        speedups.lines(data, len(data), b"", LONG)
        speedups.lines(data, len(data), b"", LONG)
        held.append(speedups.remembered())
    assert max(held) >= 32_000 and held[-1] == 0  # filled, then emptied and resting
    data = block(0, 10)
    for _ in range(3):
        first = speedups.lines(data, len(data), b"", LONG)
    assert speedups.remembered() == 0 and speedups.lines(data, len(data), b"", LONG)[0][0] is not first[0][0]

    speedups.forget()  # and no rest from here on
    held = []
    for start in range(0, 40_000, 1_000):  # each block three times: found again
        data = block(start, 1_000)
        for _ in range(3):
            speedups.lines(data, len(data), b"", LONG)
        held.append(speedups.remembered())
    assert max(held) >= 32_000 and 0 < held[-1] < 32_000  # emptied when full, and filled again
    speedups.forget()


@needs_speedups
def test_a_block_of_many_distinct_lines_grows_the_tables(monkeypatch):
    data = b"".join(b"call %d of many\n" % i for i in range(50_000)) + b"x\r\n" * 3
    lines, counts, shapes = speedups.lines(data, len(data), b"he", LONG)
    assert lines[0] == "hecall 0 of many" and lines[-1] == "x" and len(lines) == 50_003
    assert len(counts) == 50_001 and counts["x"] == 3 and len(set(shapes.values())) == 50_001


@needs_speedups
@pytest.mark.parametrize("kind", ["gemm", "all"])
def test_lines_under_two_launcher_tags_count_alike_with_and_without_the_extension(tmp_path, monkeypatch, kind):
    """A shape's lines under a second launcher tag (`[rank1]: ` after `[rank0]: `) are given shortcuts of their
    own, whose marks are equal tuples but other objects: the extension's tally must count them as one mark, as a
    dict does (it told them apart by address and lost lines: found in review)."""
    monkeypatch.setenv("BLASLOG_SAVED_SHAPES", "0")
    text = (FIXTURES / "generated" / "lt_fp32_tp4" / "blaslt_321674.log").read_text(encoding="utf-8")
    path = tmp_path / "tagged.log"
    lines = text.splitlines() * 4
    path.write_text("".join(f"[rank{i % 2}]: {line}\n" for i, line in enumerate(lines)), encoding="utf-8")

    def parsed() -> Any:
        result = blaslog.parse(str(path), events=kind == "all")
        return [record.to_dict() for record in result.records], [file.to_dict() for file in result.files]

    fast = parsed()
    monkeypatch.setattr(_c, "speedups", None)
    pure = parsed()
    assert fast == pure
    summary = pure[1][0]
    assert summary["record_lines"] + summary["foreign_lines"] + summary["unparsable_lines"] == len(lines)
    assert summary["gemm_records"] == len(pure[0]) if kind == "gemm" else summary["gemm_records"] > 0


@needs_speedups
def test_a_compressed_log_cut_short_reads_the_same(tmp_path, monkeypatch):
    whole = (FIXTURES / "seed" / "sharded.log").read_bytes() * 40
    path = tmp_path / "cut.log.gz"
    path.write_bytes(gzip.compress(whole)[:-200])
    assert _batches(path, False, monkeypatch) == _batches(path, True, monkeypatch)


@needs_speedups
@pytest.mark.parametrize("bad", [b"\xff", b"\x00", b"x" * (LONG + 1)], ids=["not-utf8", "nul", "long"])
def test_a_line_the_extension_cannot_take_sends_its_block_to_the_checked_path(bad):
    data = b"fine\n" + bad + b"\nfine again\n"
    assert speedups.lines(data, len(data), b"", LONG) is None
    batch = Reader("x")._batch(1, data)
    assert batch.shapes is None and batch.lines[0] == "fine" and batch.lines[2] == "fine again"
    assert (1 in batch.problems) == (len(bad) == 1)  # a long line is only checked against the limits


@needs_speedups
@pytest.mark.parametrize("nested", [10, 200_000], ids=["small", "large"])
def test_a_call_made_inside_a_call_leaves_the_outer_one_intact(nested):
    """A collection of the garbage collector can run inside a call (it makes lists and dicts) and run Python
    code that calls again, or lets another thread call: the inner call must not touch the outer call's memory
    (the C kept its scratch buffers in one shared pool: a use after free, found in review)."""
    import gc

    inner = b"".join(b"other line %d\n" % i for i in range(nested))
    data = b"".join(b"a line %d\n" % (i % 50) for i in range(2000))
    want = speedups.lines(data, len(data), b"", LONG)
    calls = []

    def callback(phase, info):
        if phase == "start" and len(calls) < 3:
            calls.append(speedups.lines(inner, len(inner), b"", LONG))

    threshold = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(callback)
    try:
        gc.set_threshold(1)  # a collection at the call's first tracked objects (its list, its result)
        got = speedups.lines(data, len(data), b"", LONG)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(callback)
    assert calls, "no collection ran inside the call"
    assert got == want
    assert all(len(found[0]) == nested for found in calls)


@needs_speedups
def test_a_record_made_in_c_is_the_record_made_in_python():
    """make() sets every slot to its value, in field order, as records.record_maker's make does; the record is an
    ordinary frozen dataclass instance (equal, hashable, its fields read back, its values kept alive)."""
    import gc
    import sys
    from dataclasses import fields

    from blaslog.records import Event, GemmCall, record_maker

    for cls in (GemmCall, Event):
        names, slow = record_maker(cls)
        values = [f"value of {name}" for name in names]
        probe = object()
        values[-1] = probe
        before = sys.getrefcount(probe)
        fast = speedups.make(speedups.maker(cls, names), values)
        assert type(fast) is cls and [getattr(fast, f.name) for f in fields(cls)] == values
        assert fast == slow(values) and hash(fast) == hash(slow(values))
        assert sys.getrefcount(probe) == before + 1
        del fast
        gc.collect()
        assert sys.getrefcount(probe) == before


@needs_speedups
def test_a_maker_refuses_what_is_not_a_slot_and_make_a_wrong_count():
    from blaslog.records import GemmCall, record_maker

    names, _ = record_maker(GemmCall)
    with pytest.raises(TypeError, match="not an object slot"):
        speedups.maker(GemmCall, (*names, "kind"))  # a class attribute, not a slot
    with pytest.raises(AttributeError):
        speedups.maker(GemmCall, ("no_such_field",))
    made = speedups.maker(GemmCall, names)
    with pytest.raises(ValueError, match="values for"):
        speedups.make(made, ["x"])
    with pytest.raises(TypeError):
        speedups.make(made, tuple(names))
    with pytest.raises(ValueError):
        speedups.make(object(), list(names))


@needs_speedups
@given(data=st.binary(max_size=300), size=st.integers(0, 300))
def test_newlines_counts_what_bytes_count_counts(data, size):
    data = data.replace(b"a", b"\n")  # many line ends
    if size > len(data):
        with pytest.raises(ValueError):
            speedups.newlines(data, size)
    else:
        assert speedups.newlines(bytearray(data), size) == data.count(b"\n", 0, size)
        assert speedups.newlines(memoryview(data), size) == data.count(b"\n", 0, size)


def test_a_file_s_lines_are_counted_alike_with_and_without_the_extension(tmp_path, monkeypatch):
    from blaslog import _parallel

    path = tmp_path / "lines"
    data = b"".join(b"x" * (i % 300) + b"\n" for i in range(20_000)) + b"tail"
    path.write_bytes(data)
    ranges = [(0, len(data)), (7, 1 << 20), (5, 5), (3, 300_000)]
    fast = [_parallel._count_lines(str(path), a, b) for a, b in ranges]
    monkeypatch.setattr(_c, "speedups", None)
    pure = [_parallel._count_lines(str(path), a, b) for a, b in ranges]
    assert fast == pure == [data.count(b"\n", a, b) for a, b in ranges]


@needs_speedups
@settings(max_examples=300, deadline=None)
@given(
    keys=st.dictionaries(st.text(max_size=6), st.sampled_from(["k", "l", "m", "n"]), max_size=12),
    picks=st.lists(st.integers(0, 50), max_size=60),
    copies=st.booleans(),
    # a GEMM's mark is a tuple made anew for each shortcut: equal marks that are distinct objects
    shortcuts=st.dictionaries(
        st.sampled_from(["k", "l", "m"]),
        st.one_of(st.sampled_from(["a", "b"]), st.builds(lambda n: ("a", n), st.sampled_from([1, 2]))),
    ),
)
def test_planned_gives_what_the_python_plan_gives(keys, picks, copies, shortcuts):
    from blaslog._fast.plan import _planned

    if not keys:
        picks = []
    distinct = list(keys)
    # a batch's equal lines are one str (as lines() makes them), or equal strs (copies: as Python's split makes them)
    lines = [distinct[p % len(distinct)] for p in picks]
    if copies:
        lines = ["".join(list(line)) if i % 2 else line for i, line in enumerate(lines)]
    shapes = {line: keys[line] for line in lines}
    counts = dict(Counter(lines))
    got = speedups.planned(lines, shapes, shortcuts)
    want = _planned(lines, shapes, counts, shortcuts)
    assert got == want and list(got[4]) == list(want[4])  # the tally in the same order
    assert all(a is b for a, b in zip(got[0], want[0], strict=True))
    if lines:
        with pytest.raises(KeyError):
            speedups.planned(lines, {}, shortcuts)
    with pytest.raises(TypeError):
        speedups.planned(lines, shapes)


@needs_speedups
@settings(max_examples=500, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from("abcd"),
            st.sampled_from(["x", "y", "z", None]),  # None: a mark that is no (dialect, template) pair
            st.one_of(st.integers(0, 10**6), st.sampled_from([-1, 2**63 - 1, 2**63, 10**30, 1.0, True])),
        ),
        max_size=30,
    ),
    kept=st.dictionaries(
        st.sampled_from("abcd"),
        st.tuples(
            st.sampled_from("xyz"),
            st.one_of(
                st.lists(st.text(max_size=4), max_size=3),  # an empty list, non-ASCII parts too
                st.tuples(st.text(max_size=4)),  # parts that are no list
            ),
        ),
    ),
    start=st.integers(-3, 32),
    # a range of line numbers (read by its start and step in C): from 7 on, or of other starts and steps,
    # beyond 2**62 (its items got one by one), past 2**63 (no number), shorter than the run (IndexError)
    as_range=st.one_of(
        st.booleans(),
        st.tuples(
            st.sampled_from([0, 1, 10**6, 2**62 - 5, 2**63 - 2, -3]),
            st.sampled_from([1, 2, 1000, 2**40, -1]),
            st.integers(-2, 0),
        ),
    ),
    # small: the text's limit stops the stretch; beyond 64 bits: as large or as small as can be
    limit=st.one_of(st.integers(-1, 40), st.just(1 << 15), st.sampled_from([2**63, 2**70, -(2**70)])),
)
def test_kept_rows_writes_what_the_python_loop_writes(rows, kept, start, as_range, limit):
    from blaslog.reporters.json import _kept_rows

    templates = {name: object() for name in "xyz"}  # compared by identity, as a run's templates are
    marks = [("dialect", templates[template]) if template else "no pair" for _, template, _ in rows]
    texts = [text for text, _, _ in rows]
    numbers: Any = [number for _, _, number in rows]
    if type(as_range) is tuple:
        first, step, short = as_range
        numbers = range(first, first + step * (len(rows) + short), step)
        outcomes = []
        for function in (speedups.kept_rows, _kept_rows):
            try:
                outcomes.append(
                    function(marks, texts, numbers, {t: (templates[x], p) for t, (x, p) in kept.items()}, start, limit)
                )
            except IndexError:
                outcomes.append("IndexError")
        assert outcomes[0] == outcomes[1]
        return
    if as_range:
        numbers = range(7, 7 + len(rows))
    table = {text: (templates[template], parts) for text, (template, parts) in kept.items()}
    got = speedups.kept_rows(marks, texts, numbers, table, start, limit)
    assert got == _kept_rows(marks, texts, numbers, table, start, limit)
    assert got[1] == len(rows) or got[1] >= max(start, 0)
    whole = _kept_rows(marks, texts, numbers, table, start, 1 << 30)  # no limit that bites
    assert whole[0].startswith(got[0]) and got[1] <= whole[1]
    if got[1] < whole[1]:  # stopped by the limit: after one row at least, at the row that would take it past
        one = _kept_rows(marks, texts, numbers, table, max(start, 0), 0)  # the first row alone
        assert got[0] and (got[0] == one[0] or len(got[0]) <= max(limit, 0)) and len(whole[0]) > max(limit, 0)
    if rows:  # lists of other lengths: the same error, at the same row
        with pytest.raises(ValueError):
            speedups.kept_rows(marks[:-1], texts, numbers, table, start, limit)
        with pytest.raises(ValueError):
            _kept_rows(marks[:-1], texts, numbers, table, start, limit)
        outcomes = []
        for function in (speedups.kept_rows, _kept_rows):
            try:
                outcomes.append(function(marks, texts, list(numbers)[:-1], table, start, limit))
            except ValueError:
                outcomes.append("ValueError")
        assert outcomes[0] == outcomes[1]


@pytest.mark.parametrize("start", [-(2**70), -1, 0, 3, 9, 2**63, 2**70])
def test_kept_rows_takes_any_start_as_the_python_loop_does(start):
    from blaslog.reporters.json import _kept_rows

    if speedups is None:
        pytest.skip("the C extension is not built")
    template = object()
    marks, texts, numbers = [("d", template)] * 4, ["a"] * 4, range(7, 11)
    kept = {"a": (template, ["<", ">"])}
    assert speedups.kept_rows(marks, texts, numbers, kept, start, 1 << 15) == _kept_rows(
        marks, texts, numbers, kept, start, 1 << 15
    )


def test_kept_rows_survives_a_run_changed_while_it_is_read():
    """A sequence of numbers whose items run Python code that empties the lists of lines and marks: an error,
    not a read past their ends (blaslog passes lists and ranges; the function must not crash on others)."""
    if speedups is None:
        pytest.skip("the C extension is not built")
    template = object()
    marks, texts = [("d", template)] * 2000, ["a"] * 2000
    kept = {"a": (template, ["<", ">"])}

    class Numbers:
        def __len__(self) -> int:
            return 2000

        def __getitem__(self, at: int) -> int:
            if at == 1000:
                texts.clear()
                marks.clear()
            return at

    with pytest.raises(RuntimeError, match="changed"):
        speedups.kept_rows(marks, texts, Numbers(), kept, 0, 1 << 30)


@pytest.mark.parametrize("kept_rows", ["c", "python"])
def test_kept_rows_stops_a_text_at_its_limit_after_one_row(kept_rows):
    from blaslog.reporters.json import _kept_rows

    if kept_rows == "c" and speedups is None:
        pytest.skip("the C extension is not built")
    function = speedups.kept_rows if kept_rows == "c" else _kept_rows
    template = object()
    marks, texts, numbers = [("d", template)] * 4, ["a"] * 4, [7, 8, 9, 10]
    kept = {"a": (template, ["<", ">"])}  # each row is <number>: 3 or 4 characters
    assert function(marks, texts, numbers, kept, 0, 1 << 15) == ("<7><8><9><10>", 4)
    assert function(marks, texts, numbers, kept, 0, 6) == ("<7><8>", 2)  # a third row would take it to 9
    assert function(marks, texts, numbers, kept, 2, 6) == ("<9>", 3)  # <9><10> is 7
    assert function(marks, texts, numbers, kept, 0, 1) == ("<7>", 1)  # the first row whatever its length
    assert function(marks, texts, numbers, kept, 0, -5) == ("<7>", 1)
