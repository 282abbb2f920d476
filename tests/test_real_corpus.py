"""The real-log corpus (fixtures/real/, see its README.md), in the style of tomli's valid/invalid test corpus.

* ``test_excerpt``: every ``<excerpt>.log`` parses to what its ``<excerpt>.log.expected.json`` says (GEMM key
  fields named there, record and line counts). An expected file with ``known_failure`` is a strict xfail: when a
  parser fix makes it pass, the test fails until the ``known_failure`` key is removed.
* ``test_accounting``: record_lines + foreign_lines + unparsable_lines == lines on every excerpt, known failures too.
* ``test_inventory``: enough excerpts, each with a SOURCES.md row and a well-formed expected file.
* ``test_mutation``: each excerpt changed the way real logs are (program prints in between, a launcher tag on
  every line, CRLF, compressed, the last line cut) must give the GEMMs of the plain excerpt. Mutations that fail
  today are listed in MUTATION_XFAILS (non-strict xfail); remove an entry when the parser handles it.

Draft an expected file for a new excerpt (then check every value against the log text by hand)::

    python tests/test_real_corpus.py fixtures/real/NEW.log > fixtures/real/NEW.log.expected.json
"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import blaslog
from blaslog.records import ALGORITHM_FIELDS, Event, GemmCall

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "real"
EXCERPTS = sorted(CORPUS.glob("*.log"))
MIN_EXCERPTS = 40

#: The GEMM fields a draft expected file lists (plus the algorithm fields the log printed, plus ``line``).
KEY_FIELDS = (
    "function",
    "m",
    "n",
    "k",
    "batch_count",
    "transa",
    "transb",
    "a_type",
    "b_type",
    "c_type",
    "d_type",
    "compute_type",
)
#: What the mutation tests compare between the plain and the mutated excerpt.
COMPARED_FIELDS = (*KEY_FIELDS, *ALGORITHM_FIELDS, "call_count")
COUNT_KEYS = ("lines", "events", "truncated", "foreign_lines", "unparsable_lines")
EXPECTED_KEYS = {"known_failure", "note", "gemms", *COUNT_KEYS}
GEMM_KEYS = {
    "line",
    "lda",
    "ldb",
    "ldc",
    "ldd",
    "stride_a",
    "stride_b",
    "stride_c",
    "stride_d",
    "scale_type",
    *COMPARED_FIELDS,
}

PRINT_LINE = "step 17 loss=4.21"
LAUNCHER_TAGS = ("[rank0]: ", "[default1]:", "3: ", "[1,0]<stdout>: ")
"""The tags launchers put before every line: torchrun, torch elastic, srun --label, mpirun --tag-output. Each
excerpt gets one of them (the excerpts in turn)."""

# ---------------------------------------------------------------------------------------------------------------
# Mutations that fail today, as (excerpt file name or "*" for every excerpt, mutation): the reason observed.
# Non-strict xfails: an entry that starts passing shows as XPASS; remove it then.
# ---------------------------------------------------------------------------------------------------------------
_WRAPPED_BENCH_PRINTS = (
    "a program print between the lines of a bench command wrapped by hand without ` \\` ends the "
    "join (nothing says the command goes on): the first line alone is a truncated record, the "
    "rest foreign"
)
_WRAPPED_TRACE_CUT = (
    "a hand-wrapped hipBLASLt [Trace] record whose last line is cut to a fragment that is no "
    "key=value (`  al` of `  alpha=1 beta=0`) ends at the line before: a complete GEMM, not truncated"
)
_GLUED_THEN_CUT = (
    "two bench commands glued on one line (a person pasted them), then cut at 80 columns: the second "
    "command begins in a later piece, and glued commands are looked for in a line's first piece only"
)
_TUNABLEOP_TAGGED = (
    "a TunableOp results file is written by PyTorch itself, never through a launcher's stdout: rows are read "
    "from the start of a line only, so a tag before every row leaves them foreign"
)
_JULIA_TERMWRAP = (
    "the poster's terminal cut the GEMM's header at 224 columns; a second mutation on top (prints between all "
    "lines, a tag that joins the `::` before the header, or a second wrap at 80 columns) leaves its pieces apart"
)
_CONTINUED_TRACE = (
    "a cuBLASLt record continued over lines with ` \\` and then cut at 80 columns (`customOptio` / `n=6] \\`), "
    "or with a print between all its lines: the short piece reads as a line of its own (a width seen once is "
    "not known to be a wrap)"
)
_HAND_WRAPPED_THEN_CUT = (
    "a [Trace] record a person wrapped over lines, then cut at 80 columns: `transB=OP_N e` / `pilogue=...` "
    "reads as a line of its own (a key inside an open group) at a width not known as a wrap's; the stray `e` is "
    "reported, the GEMM kept out"
)
_BENCH_CUT_AT_ITS_TAIL = (
    "a logged bench line cut just before the options its logger writes last (`--algo 0 --solution_index 0 "
    "--flags 0`) reads as a command a person typed without them: a whole call, with a warning that the input "
    "ended inside it and its last value may be cut"
)
MUTATION_XFAILS: dict[tuple[str, str], str] = {
    ("rocblas_rocm7.1_llamacpp-e228-bench-line.log", "cut-last-line"): _BENCH_CUT_AT_ITS_TAIL,
    ("hipblaslt_therock-7.x_windows-w7900-test-report.log", "hard-wrap"): _HAND_WRAPPED_THEN_CUT,
    ("tunableop_2.10.0_citation-forecast-tf32-gfx1100.log", "launcher-tag"): _TUNABLEOP_TAGGED,
    ("tunableop_2.11.0_openpi-gfx942-tf32-negative-id.log", "launcher-tag"): _TUNABLEOP_TAGGED,
    ("tunableop_2.9.1_wbit-gfx1100-strided-batched-bias.log", "launcher-tag"): _TUNABLEOP_TAGGED,
    ("tunableop_2.9.1_mi350x-whisper-logits-cache.log", "launcher-tag"): _TUNABLEOP_TAGGED,
    ("cublas_11.8_cudajl-issue-1852-julia-logger-termwrap.log", "prints"): _JULIA_TERMWRAP,
    ("cublas_11.8_cudajl-issue-1852-julia-logger-termwrap.log", "launcher-tag"): _JULIA_TERMWRAP,
    ("cublas_11.8_cudajl-issue-1852-julia-logger-termwrap.log", "hard-wrap"): _JULIA_TERMWRAP,
    ("cublas_11.8_cudajl-issue-1852-julia-logger-termwrap.log", "ci-time-stamps"): _JULIA_TERMWRAP,
    **{
        (name, "ci-time-stamps"): _TUNABLEOP_TAGGED
        for name in (
            "tunableop_2.10.0_citation-forecast-tf32-gfx1100.log",
            "tunableop_2.11.0_openpi-gfx942-tf32-negative-id.log",
            "tunableop_2.9.1_wbit-gfx1100-strided-batched-bias.log",
            "tunableop_2.9.1_mi350x-whisper-logits-cache.log",
        )
    },
    ("cublaslt_13.2.1_trtllm-gb10-parser-fixture-continuation.log", "prints"): _CONTINUED_TRACE,
    ("cublaslt_13.2.1_trtllm-gb10-parser-fixture-continuation.log", "hard-wrap"): _CONTINUED_TRACE,
    ("hipblaslt_unknown_chenwen-sample-wrapped-in-comment.log", "prints"): _WRAPPED_BENCH_PRINTS,
    ("hipblaslt_unknown_glm5-w8a8-int8-bench-glued.log", "hard-wrap"): _GLUED_THEN_CUT,
    ("hipblaslt_therock-7.x_windows-w7900-test-report.log", "cut-last-line"): _WRAPPED_TRACE_CUT,
}


def _xfail_reason(name: str, mutation: str) -> str | None:
    return MUTATION_XFAILS.get((name, mutation)) or MUTATION_XFAILS.get(("*", mutation))


# ---------------------------------------------------------------------------------------------------------------
# Reading results
# ---------------------------------------------------------------------------------------------------------------


def _parse(path: Path) -> tuple[Any, list[GemmCall], list[Event]]:
    result = blaslog.parse(str(path))
    summary = result.files[0]
    gemms = [r for r in result.records if isinstance(r, GemmCall)]
    events = [r for r in result.records if isinstance(r, Event)]
    return summary, gemms, events


def _assert_accounting(summary: Any, gemms: list[GemmCall], events: list[Event]) -> None:
    assert summary.record_lines + summary.foreign_lines + summary.unparsable_lines == summary.lines, summary
    assert min(summary.record_lines, summary.foreign_lines, summary.unparsable_lines) >= 0, summary
    assert summary.gemm_records == len(gemms), summary
    assert summary.other_records == len(events), summary


def _counts(summary: Any, events: list[Event]) -> dict[str, int]:
    return {
        "lines": summary.lines,
        "events": summary.other_records,
        "truncated": sum(1 for e in events if e.event == "truncated"),
        "foreign_lines": summary.foreign_lines,
        "unparsable_lines": summary.unparsable_lines,
    }


def _project(gemm: GemmCall, keys: Any) -> dict[str, Any]:
    return {key: getattr(gemm, key) for key in keys}


def draft_expected(path: Path) -> dict[str, Any]:
    """What blaslog says today about an excerpt, in the expected-file schema (a draft: check it by hand)."""
    summary, gemms, events = _parse(path)
    drafted = []
    for gemm in gemms:
        entry = _project(gemm, KEY_FIELDS)
        entry.update((name, getattr(gemm, name)) for name in ALGORITHM_FIELDS if getattr(gemm, name) is not None)
        if gemm.call_count != 1:  # a profile entry, a line behind a `uniq -c` count
            entry["call_count"] = gemm.call_count
        entry["line"] = gemm.line
        drafted.append(entry)
    counts = _counts(summary, events)
    return {"lines": counts.pop("lines"), "gemms": drafted, **counts}


def dump_expected(expected: dict[str, Any]) -> str:
    """The expected file's text: top-level keys one per line, one GEMM per line."""
    order = ["known_failure", "note", "lines", "gemms", "events", "truncated", "foreign_lines", "unparsable_lines"]
    parts = []
    for key in order:
        if key not in expected:
            continue
        if key == "gemms":
            rows = [f"    {json.dumps(g, ensure_ascii=False)}" for g in expected[key]]
            value = "[\n" + ",\n".join(rows) + "\n  ]" if rows else "[]"
        else:
            value = json.dumps(expected[key], ensure_ascii=False)
        parts.append(f"  {json.dumps(key)}: {value}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _expected_path(path: Path) -> Path:
    return path.with_name(path.name + ".expected.json")


def _load_expected(path: Path) -> dict[str, Any]:
    return json.loads(_expected_path(path).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------------------------
# The excerpts against their expected files
# ---------------------------------------------------------------------------------------------------------------


def _excerpt_params() -> list[Any]:
    params = []
    for path in EXCERPTS:
        marks = []
        if _expected_path(path).exists():
            failure = _load_expected(path).get("known_failure")
            if failure:
                marks.append(pytest.mark.xfail(strict=True, reason=f"known failure: {failure}"))
        params.append(pytest.param(path, marks=marks, id=path.name))
    return params


@pytest.mark.parametrize("path", _excerpt_params())
def test_excerpt(path: Path) -> None:
    expected = _load_expected(path)
    summary, gemms, events = _parse(path)
    _assert_accounting(summary, gemms, events)
    wanted = expected["gemms"]
    got = [_project(g, wanted[i].keys() if i < len(wanted) else (*KEY_FIELDS, "line")) for i, g in enumerate(gemms)]
    actual = {"counts": _counts(summary, events), "gemms": got}
    assert actual == {"counts": {key: expected[key] for key in COUNT_KEYS}, "gemms": wanted}


@pytest.mark.parametrize("path", [pytest.param(p, id=p.name) for p in EXCERPTS])
def test_accounting(path: Path) -> None:
    summary, gemms, events = _parse(path)
    _assert_accounting(summary, gemms, events)
    assert summary.lines == len(path.read_bytes().splitlines())


def test_inventory() -> None:
    assert len(EXCERPTS) >= MIN_EXCERPTS, f"only {len(EXCERPTS)} excerpts in {CORPUS}"
    sources = (CORPUS / "SOURCES.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\|\s*`([^`]+)`\s*\|", sources, flags=re.MULTILINE))
    names = {p.name for p in EXCERPTS}
    assert sorted(names - rows) == [], "excerpts without a SOURCES.md row"
    assert sorted(rows - names) == [], "SOURCES.md rows without an excerpt"
    assert sorted(p.name for p in EXCERPTS if not _expected_path(p).exists()) == [], "excerpts without expected"
    orphans = [
        p.name
        for p in CORPUS.glob("*.expected.json")
        if not p.name.endswith(".log.expected.json") or not (CORPUS / p.name.removesuffix(".expected.json")).exists()
    ]
    assert orphans == [], "expected files without an excerpt"
    for path in EXCERPTS:
        expected = _load_expected(path)
        where = _expected_path(path).name
        assert set(expected) <= EXPECTED_KEYS, (where, set(expected) - EXPECTED_KEYS)
        assert EXPECTED_KEYS - {"known_failure", "note"} <= set(expected), where
        assert all(isinstance(expected[key], int) and expected[key] >= 0 for key in COUNT_KEYS), where
        failure = expected.get("known_failure")
        assert failure is None or (isinstance(failure, str) and failure.strip() and "\n" not in failure), where
        for gemm in expected["gemms"]:
            assert {"function", "line"} <= set(gemm) <= GEMM_KEYS, (where, gemm)
            assert 1 <= gemm["line"] <= expected["lines"], (where, gemm)
        lines = [g["line"] for g in expected["gemms"]]
        assert lines == sorted(lines), where


# ---------------------------------------------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------------------------------------------


def _zstd_compress() -> Any:
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14

        return zstd.compress
    except ImportError:
        pass
    try:
        import zstandard  # type: ignore[import-not-found]

        return zstandard.ZstdCompressor().compress
    except ImportError:
        return None


COMPRESSORS: dict[str, tuple[str, Any]] = {
    "gzip": (".gz", gzip.compress),
    "bz2": (".bz2", bz2.compress),
    "xz": (".xz", lzma.compress),
    "zstd": (".zst", _zstd_compress()),
}
MUTATIONS = ("prints", "launcher-tag", "ci-time-stamps", "crlf", *COMPRESSORS, "cut-last-line", "hard-wrap")
WRAP_AT = 80
"""The width of the `hard-wrap` mutation: a terminal, a CI log viewer or a mail program cut every longer line
into pieces of this many characters, values and all."""


def _lines(text: str) -> list[str]:
    """Physical lines without their ends (every excerpt ends with a newline)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _cut_last_line(name: str, text: str) -> tuple[str, int, str, str]:
    """The excerpt up to its last non-blank line, that line cut at a seeded point and left without a newline.
    Returns (text, line number of the cut line, the line, what is left of it)."""
    lines = _lines(text)
    while lines and not lines[-1].strip():
        lines.pop()
    last = lines[-1]
    cut = random.Random(f"blaslog-corpus:{name}").randrange(1, len(last)) if len(last) > 1 else 1
    kept = last[:cut]
    return "".join(line + "\n" for line in lines[:-1]) + kept, len(lines), last, kept


def _mutation_params() -> list[Any]:
    params = []
    for path in EXCERPTS:
        for mutation in MUTATIONS:
            marks = []
            if mutation in COMPRESSORS and COMPRESSORS[mutation][1] is None:
                marks.append(pytest.mark.skip(reason="no zstd compressor here (needs `zstandard` or Python 3.14)"))
            reason = _xfail_reason(path.name, mutation)
            if reason:
                marks.append(pytest.mark.xfail(strict=False, reason=reason))
            params.append(pytest.param(path, mutation, marks=marks, id=f"{path.name}-{mutation}"))
    return params


def test_mutation_xfails_named() -> None:
    """Every MUTATION_XFAILS entry names an excerpt (or "*") and a mutation: a renamed file leaves no stale entry."""
    names = {p.name for p in EXCERPTS} | {"*"}
    assert sorted(key for key in MUTATION_XFAILS if key[0] not in names or key[1] not in MUTATIONS) == []


@pytest.mark.parametrize(("path", "mutation"), _mutation_params())
def test_mutation(path: Path, mutation: str, tmp_path: Path) -> None:
    plain_summary, plain_gemms, plain_events = _parse(path)
    text = path.read_text(encoding="utf-8")
    with_lines = (*COMPARED_FIELDS, "line")
    want = [_project(g, with_lines) for g in plain_gemms]
    same_counts = False
    if mutation == "prints":
        # a program print between every two lines: line numbers move, the GEMMs do not change
        body = f"\n{PRINT_LINE}\n".join(_lines(text)) + "\n"
        target = tmp_path / path.name
        target.write_text(body, encoding="utf-8")
        want = [_project(g, COMPARED_FIELDS) for g in plain_gemms]
    elif mutation == "launcher-tag":
        target = tmp_path / path.name
        tag = LAUNCHER_TAGS[EXCERPTS.index(path) % len(LAUNCHER_TAGS)]
        target.write_text("".join(tag + line + "\n" for line in _lines(text)), encoding="utf-8")
    elif mutation == "ci-time-stamps":
        # a CI runner's raw log (GitHub Actions): a time stamp before every line, another on each line
        target = tmp_path / path.name
        stamped = (
            f"2024-01-15T10:23:{45 + i // 10**7 % 10}.{i % 10**7:07d}Z {line}\n" for i, line in enumerate(_lines(text))
        )
        target.write_text("".join(stamped), encoding="utf-8")
    elif mutation == "crlf":
        target = tmp_path / path.name
        target.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        same_counts = True
    elif mutation in COMPRESSORS:
        suffix, compress = COMPRESSORS[mutation]
        target = tmp_path / (path.name + suffix)
        target.write_bytes(compress(path.read_bytes()))
        same_counts = True
    elif mutation == "hard-wrap":
        pieces = [line[i : i + WRAP_AT] for line in _lines(text) for i in range(0, max(len(line), 1), WRAP_AT)]
        target = tmp_path / path.name
        target.write_text("".join(piece + "\n" for piece in pieces), encoding="utf-8")
        want = [_project(g, COMPARED_FIELDS) for g in plain_gemms]
    else:
        assert mutation == "cut-last-line"
        body, cut_line, last, kept = _cut_last_line(path.name, text)
        target = tmp_path / path.name
        target.write_text(body, encoding="utf-8")
        cut_gemms = [g for g in plain_gemms if g.line <= cut_line <= g.end_line]
        if kept.rstrip() == last.rstrip():
            cut_gemms = []  # the cut fell in trailing whitespace: the record is complete
        want = [_project(g, with_lines) for g in plain_gemms if not any(g is c for c in cut_gemms)]
    summary, gemms, events = _parse(target)
    _assert_accounting(summary, gemms, events)
    cut_at = {g.line for g in cut_gemms} if mutation == "cut-last-line" else set()  # checked below
    got = [_project(g, want[0].keys() if want else with_lines) for g in gemms if g.line not in cut_at]
    assert got == want
    if same_counts:
        assert _counts(summary, events) == _counts(plain_summary, plain_events)
    if mutation == "cut-last-line":
        # the GEMM that lost its end is kept as a truncated record, or (cut before its dialect shows) the cut line
        # is reported
        ends = [p for p in summary.problems if p.line == cut_line and "the input ends inside this line" in p.message]
        for gemm in cut_gemms:
            truncated = any(e.event == "truncated" and e.line == gemm.line for e in events)
            # or kept whole, said so, where the cut line holds none of its fields (a kernel's name after a table)
            fields = _project(gemm, COMPARED_FIELDS)
            whole = any(g.line == gemm.line and _project(g, COMPARED_FIELDS) == fields for g in gemms)
            said = any(p.line == gemm.line and "the input ends inside this" in p.message for p in summary.problems)
            assert truncated or (gemm.line == cut_line and ends) or (whole and said), (gemm.line, summary.problems)


def main(argv: list[str]) -> int:
    """Print a draft expected file for each excerpt named."""
    for name in argv:
        sys.stdout.write(dump_expected(draft_expected(Path(name))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
