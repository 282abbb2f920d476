"""Records to pandas, the only module that imports pandas (lazily, so the CLI starts fast)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from blaslog.records import GEMM_FIELD_NAMES, Event, GemmCall, ParseResult, Record

#: GEMM fields held as integers (nullable Int64 in frames, int64 in Parquet).
INT_COLUMNS = (
    "m",
    "n",
    "k",
    "batch_count",
    "lda",
    "ldb",
    "ldc",
    "ldd",
    "stride_a",
    "stride_b",
    "stride_c",
    "stride_d",
    "algo_id",
    "num_splits_k",
    "cta_swizzling",
    "custom_option",
    "scheduling_mode",
    "workspace_size",
    "sm_count_target",
    "flags",
    "solution_index",
    "algo",
    "call_count",
    "line",
    "end_line",
)
_CATEGORY_COLUMNS = (
    "library",
    "function",
    "transa",
    "transb",
    "a_type",
    "b_type",
    "c_type",
    "d_type",
    "compute_type",
    "scale_type",
    "epilogue",
    "tile",
    "stages",
    "reduction_scheme",
    "inner_shape",
    "cluster_shape",
    "level",
    "log_format",
    "file",
    "thread",
)
#: GEMM fields held as booleans.
BOOL_COLUMNS = ("bias_pointer", "scale_pointers", "out_of_place")
EVENT_COLUMNS = (
    "library",
    "function",
    "event",
    "text",
    "fields",
    "file",
    "line",
    "end_line",
    "thread",
    "timestamp",
    "level",
    "log_format",
)


#: Columns of Report.findings_frame(), in order.
FINDING_COLUMNS = (
    "class",
    "level",
    "kind",
    "title",
    "signature",
    "fields",
    "count",
    "ranks",
    "file",
    "line",
    "fingerprint",
)


def findings_frame(rows: Iterable[Mapping[str, Any]]) -> Any:
    """A DataFrame of finding rows (see Report.findings_frame): class and level categorical, count and line
    nullable integers."""
    import pandas as pd

    frame = pd.DataFrame([[row.get(c) for c in FINDING_COLUMNS] for row in rows], columns=list(FINDING_COLUMNS))
    for column in ("class", "level", "kind"):
        frame[column] = frame[column].astype("category")
    for column in ("count", "line"):
        frame[column] = pd.array(frame[column].tolist(), dtype="Int64")
    return frame


def to_frame(
    records: Iterable[Record] | ParseResult,
    kind: str = "gemm",
    *,
    rank: int | str | Mapping[str, int | str | None] | None = None,
    run: str | Mapping[str, str | None] | None = None,
) -> Any:
    """A DataFrame of GEMM records (`kind="gemm"`) or events (`kind="event"`), with fixed columns and dtypes.

    `records` is any iterable of records, a ParseResult among them.

    Integers are nullable ``Int64``, closed vocabularies ``category``, flags ``boolean``; `extra` and
    `pointers` stay as tuples of (key, value).

    `rank` and `run`, when known, add a `rank` (nullable integer when every rank is a number) and a `run`
    (categorical) column: one value for every row, or a mapping from each record's `file` to its value
    (files it does not name get none).
    """
    frame = _to_frame(records, kind)
    if rank is not None:
        frame["rank"] = _per_file(frame, rank)
        if all(isinstance(v, int) or v is None for v in frame["rank"]):
            frame["rank"] = _int_array(frame["rank"].tolist())
    if run is not None:
        frame["run"] = _per_file(frame, run).astype("category")
    return frame


def _per_file(frame: Any, value: Any) -> Any:
    import pandas as pd

    if isinstance(value, Mapping):
        return pd.Series([value.get(str(file)) for file in frame["file"]], index=frame.index, dtype=object)
    return pd.Series([value] * len(frame), index=frame.index, dtype=object)


def _int_array(values: list[Any]) -> Any:
    import pandas as pd

    return pd.array(values, dtype="Int64")


def _to_frame(records: Iterable[Record] | ParseResult, kind: str) -> Any:
    import pandas as pd

    if kind == "event":
        rows = [[getattr(r, c) for c in EVENT_COLUMNS] for r in records if isinstance(r, Event)]
        frame = pd.DataFrame(rows, columns=list(EVENT_COLUMNS))
        for column in ("library", "function", "event", "level", "log_format", "file"):
            frame[column] = frame[column].astype("category")
        frame["line"] = frame["line"].astype("Int64")
        return frame
    gemms = [r for r in records if isinstance(r, GemmCall)]
    frame = pd.DataFrame([[getattr(r, c) for c in GEMM_FIELD_NAMES] for r in gemms], columns=list(GEMM_FIELD_NAMES))
    for column in INT_COLUMNS:
        values = frame[column].tolist()
        try:
            frame[column] = pd.array(values, dtype="Int64")
        except (OverflowError, TypeError, ValueError):
            # a value outside 64 bits (a log may print one): the column keeps Python integers, nothing is cut
            frame[column] = pd.Series(values, dtype=object)
    for column in _CATEGORY_COLUMNS:
        frame[column] = frame[column].astype("category")
    for column in BOOL_COLUMNS:
        frame[column] = pd.array(frame[column].tolist(), dtype="boolean")
    return frame
