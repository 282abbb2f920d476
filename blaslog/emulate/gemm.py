"""One GEMM for ``blaslog emulate``: from ``--shape``/``--numerics``/``--against``, or from log records."""

from __future__ import annotations

import re
from collections.abc import Sequence

from blaslog.caps import Caps
from blaslog.emulate.arithmetic import Arithmetic, NotModelled, by_name
from blaslog.emulate.findings import arithmetics, tp_of
from blaslog.emulate.gpus import Gpu, detect
from blaslog.emulate.predict import SideSpec
from blaslog.errors import BlaslogError, InputError
from blaslog.records import GemmCall


def record_at(spec: str) -> GemmCall:
    """The GEMM record of `LOG:LINE` (the record that spans that physical line)."""
    from blaslog.parse import parse_file

    path, sep, number = spec.rpartition(":")
    if not sep or not number.isdigit() or not path:
        raise InputError(f"{spec!r}: give a GEMM record as LOG:LINE (e.g. run.log:120)")
    line = int(number)
    result = parse_file(path, events=False)
    for record in result.gemms:
        if record.line <= line <= max(record.end_line, record.line):
            return record
    lines = [r.line for r in result.gemms[:8]]
    raise InputError(
        f"{path}:{line}: no GEMM record spans this line"
        + (f" (GEMM records start on lines {', '.join(map(str, lines))} ...)" if lines else " (it has no GEMM record)")
    )


def _same_gemm(sharded: GemmCall, unsharded: GemmCall, specs: Sequence[str]) -> None:
    """BlaslogError unless the two records are one GEMM, the first (sharded) one's m, n or k divided or equal."""
    from blaslog.diff import coarse_key

    if coarse_key(sharded) != coarse_key(unsharded):
        raise BlaslogError(f"{specs[0]} and {specs[1]} are not the same GEMM (their types, transposes or compute "
                           "types differ)")  # fmt: skip
    if any((s or 0) > (u or 0) for s, u in zip(sharded.dims()[:3], unsharded.dims()[:3], strict=True)):
        raise BlaslogError(
            f"{specs[0]} ({sharded.shape_text()}) is larger than {specs[1]} ({unsharded.shape_text()}): give the "
            "sharded record first, then the unsharded one"
        )


def parse_shape(text: str) -> tuple[int, int, int]:
    """(m, n, k) of `64x1024x32`."""
    match = re.fullmatch(r"\s*(\d+)\s*[xX,]\s*(\d+)\s*[xX,]\s*(\d+)\s*", text)
    if match is None:
        raise BlaslogError(f"--shape {text!r}: give MxNxK, e.g. 64x1024x32")
    m, n, k = (int(g) for g in match.groups())
    if min(m, n, k) < 1:
        raise BlaslogError(f"--shape {text!r}: m, n and k must be at least 1")
    return m, n, k


def cli_sides(
    records: Sequence[str],
    *,
    shape: str | None,
    numerics: str | None,
    against: str | None,
    tp: int,
    caps: Caps | None,
    gpu: Gpu | None,
) -> tuple[int, SideSpec, SideSpec, str]:
    """(k, first side, second side, where the GPU came from) for `blaslog emulate`'s arguments.

    The second side is the reference: the GEMM of --shape with --numerics (or the second record); the first
    is --against, split over --tp ranks (or the first record)."""
    if len(records) > 2:
        raise BlaslogError("give at most two LOG:LINE records (sharded, then unsharded)")
    calls = [record_at(spec) for spec in records]
    source = "--gpu"
    if gpu is None:
        evidence = detect([spec.rpartition(":")[0] for spec in records], caps.gpu if caps else None)
        if evidence is None:
            raise BlaslogError("give --gpu NAME: nothing names the GPU that ran this GEMM")
        gpu, source = evidence.gpu, evidence.source
    try:
        if len(calls) == 2:
            if numerics or against or shape:
                raise BlaslogError("with two records, their numerics come from --caps: leave out --shape, --numerics "
                                   "and --against")  # fmt: skip
            return (*_record_sides(calls[0], calls[1], records, caps, gpu), source)
        if calls:
            k, mine, other = _one_record_sides(calls[0], shape, numerics, against, caps, gpu)
        else:
            if not shape or not numerics or not against:
                raise BlaslogError("give --shape, --numerics and --against (or a LOG:LINE record)")
            _, _, k = parse_shape(shape)
            mine, other = (by_name(numerics, gpu),), (by_name(against, gpu),)
    except NotModelled as exc:
        raise BlaslogError(f"cannot emulate: {exc}") from None
    if tp > 1 and k % tp:
        raise BlaslogError(f"--tp {tp} does not divide k={k}")
    roles = ("sharded", "unsharded") if tp > 1 else ("against", "numerics")
    return k, SideSpec(roles[0], other, tp), SideSpec(roles[1], mine, 1), source


def _record_sides(
    sharded: GemmCall, unsharded: GemmCall, records: Sequence[str], caps: Caps | None, gpu: Gpu
) -> tuple[int, SideSpec, SideSpec]:
    """(k, sharded side, unsharded side) of two records of one GEMM, their arithmetic as --caps knows it."""
    _same_gemm(sharded, unsharded, records)
    ranks = tp_of(sharded, unsharded)
    k = unsharded.k or sharded.k or 0
    first = SideSpec("sharded", arithmetics(sharded, caps, gpu), ranks)
    second = SideSpec("unsharded", arithmetics(unsharded, caps, gpu), 1)
    return k, first, second


def _one_record_sides(
    record: GemmCall,
    shape: str | None,
    numerics: str | None,
    against: str | None,
    caps: Caps | None,
    gpu: Gpu,
) -> tuple[int, tuple[Arithmetic, ...], tuple[Arithmetic, ...]]:
    """(k, --numerics side's arithmetics, --against side's) of one record: each given one, else the record's."""
    if shape:
        raise BlaslogError("the record gives the shape: leave out --shape")
    k = record.k or 0
    if not numerics and not against:
        raise BlaslogError(
            "one record alone has nothing to compare: give --numerics and/or --against (the other side's "
            "arithmetic), or a second LOG:LINE record"
        )
    known = arithmetics(record, caps, gpu)
    out = known[0].output
    mine = (by_name(numerics, gpu, out),) if numerics else known
    other = (by_name(against, gpu, out),) if against else known
    return k, mine, other


__all__ = ["cli_sides", "parse_shape", "record_at"]
