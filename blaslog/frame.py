"""Records to pandas, the only module that imports pandas (lazily, so the CLI starts fast)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from blaslog.records import GEMM_FIELD_NAMES, Event, GemmCall, ParseResult, Record

_INT_COLUMNS = ("m", "n", "k", "batch_count", "lda", "ldb", "ldc", "ldd", "stride_a", "stride_b", "stride_c",
                "stride_d", "algo_id", "num_splits_k", "cta_swizzling", "custom_option", "scheduling_mode",
                "workspace_size", "sm_count_target", "flags", "solution_index", "algo", "call_count", "line",
                "end_line")
_CATEGORY_COLUMNS = ("library", "function", "transa", "transb", "a_type", "b_type", "c_type", "d_type",
                     "compute_type", "scale_type", "epilogue", "tile", "stages", "reduction_scheme", "inner_shape",
                     "cluster_shape", "level", "log_format", "file", "thread")
_BOOL_COLUMNS = ("bias_pointer", "scale_pointers", "out_of_place")
EVENT_COLUMNS = ("library", "function", "event", "text", "fields", "file", "line", "end_line", "thread",
                 "timestamp", "level", "log_format")


def to_frame(records: Iterable[Record] | ParseResult, kind: str = "gemm") -> Any:
    """A DataFrame of GEMM records (`kind="gemm"`) or events (`kind="event"`), with fixed columns and dtypes.

    `records` is any iterable of records, a ParseResult among them.

    Integers are nullable ``Int64``, closed vocabularies ``category``, flags ``boolean``; `extra` and
    `pointers` stay as tuples of (key, value).
    """
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
    for column in _INT_COLUMNS:
        values = frame[column].tolist()
        try:
            frame[column] = pd.array(values, dtype="Int64")
        except (OverflowError, TypeError, ValueError):
            # a value outside 64 bits (a log may print one): the column keeps Python integers, nothing is cut
            frame[column] = pd.Series(values, dtype=object)
    for column in _CATEGORY_COLUMNS:
        frame[column] = frame[column].astype("category")
    for column in _BOOL_COLUMNS:
        frame[column] = pd.array(frame[column].tolist(), dtype="boolean")
    return frame
