"""Records as Parquet, partitioned by run and rank, for DuckDB, Spark or pandas (`pip install 'blaslog[parquet]'`).

    blaslog parse 'logs/tp4/*.log' 'logs/tp1/*.log' --format parquet --output gemms/

writes ``gemms/run=<run>/rank=<rank>/part-00000.parquet``: the run is the input's folder name (or --run),
the rank the input's place among that run's inputs in name order. Records are written in batches, so
memory stays bounded whatever the size of the logs. Every file has one fixed schema (:func:`arrow_schema`,
version :data:`SCHEMA_VERSION`, kept in each file's key-value metadata as ``blaslog_schema_version`` and in
``_schema.json`` at the top of the folder, which Parquet readers skip), so that DuckDB, pandas, Spark and
Dask DataFrame read the folder as one table. :func:`write_partition` writes one input's records and runs on
a Dask worker as well (:mod:`blaslog.cluster`); a folder may be an fsspec URL there (``s3://...``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from blaslog.errors import BlaslogError
from blaslog.frame import BOOL_COLUMNS, INT_COLUMNS
from blaslog.records import GEMM_FIELD_NAMES, FileSummary, GemmCall, name_bytes

SCHEMA_VERSION = 1
"""Version of the columns below; raised when a column is renamed, removed or changes type (adding one is
compatible and does not raise it)."""

_JSON = frozenset(("extra", "pointers"))

COLUMNS: tuple[tuple[str, str], ...] = (
    *(
        (name, "int64" if name in INT_COLUMNS else "bool" if name in BOOL_COLUMNS else "string")
        for name in GEMM_FIELD_NAMES
    ),
    ("overflow", "string"),
)
"""(column, Parquet type) of every file, in order: the fields of :class:`~blaslog.records.GemmCall`, `extra` and
`pointers` as JSON objects, and `overflow`: a JSON object of the integers that do not fit 64 bits (column ->
exact decimal text; the column itself is null there), or null. `run` and `rank` are the partition columns."""

BATCH = 100_000


def partitions(names: Sequence[str], run: str | None = None) -> tuple[list[tuple[str, str, int]], list[str]]:
    """(input, run partition value, rank) for each input, and notes. The run is the input's folder (or `run`),
    made safe for a partition value; two folders whose safe names collide get suffixes (`r_un`, `r_un-2`),
    said in a note. The rank is taken as blaslog.ranks takes it (tags are not read here: the path, or the
    natural order of the run's files)."""
    from blaslog.ranks import assign_ranks

    by_run: dict[str, list[str]] = {}
    for name in names:
        by_run.setdefault(run or str(Path(name).resolve().parent), []).append(name)
    out: list[tuple[str, str, int]] = []
    notes: list[str] = []
    used: dict[str, str] = {}
    for folder, files in by_run.items():
        base = _safe(run or Path(folder).name or "run")
        value, number = base, 1
        while value in used:
            number += 1
            value = f"{base}-{number}"
        used[value] = folder
        if value != base:
            notes.append(f"run partition {base!r} is taken by {used[base]}: {folder} is written as run={value}")
        out.extend(
            (r.path, value, r.rank if r.rank is not None else 0) for r in assign_ranks(files, [b""] * len(files))
        )
    return out, notes


def arrow_schema() -> Any:
    """The pyarrow schema of every file, with ``blaslog_schema_version`` in its metadata."""
    import pyarrow as pa

    types = {"int64": pa.int64(), "bool": pa.bool_(), "string": pa.string()}
    return pa.schema(
        [(name, types[kind]) for name, kind in COLUMNS],
        metadata={"blaslog_schema_version": str(SCHEMA_VERSION), "blaslog_columns": "see _schema.json"},
    )


def schema_document() -> dict[str, Any]:
    """What ``_schema.json`` holds."""
    return {
        "blaslog_schema_version": SCHEMA_VERSION,
        "partitioning": ["run", "rank"],
        "files": "run=<run>/rank=<rank>/part-<n>.parquet",
        "columns": [{"name": name, "type": kind} for name, kind in COLUMNS],
        "partition_columns": [{"name": "run", "type": "string"}, {"name": "rank", "type": "int64"}],
    }


def write_parquet(
    names: Sequence[str], out_dir: str, records_of: Any, *, run: str | None = None
) -> tuple[list[FileSummary], list[str]]:
    """Write the GEMM records of each input (``records_of(name, summaries)`` yields them) under `out_dir`; the
    inputs' accounting, and notes (partition names that collided)."""
    folders, notes = prepare(names, out_dir, run)
    summaries: list[FileSummary] = []
    overflowed: Counter[str] = Counter()
    for name in names:
        write_partition((r for r in records_of(name, summaries) if isinstance(r, GemmCall)), folders[name], overflowed)
    notes.extend(overflow_notes(overflowed))
    return summaries, notes


def overflow_notes(overflowed: Counter[str]) -> list[str]:
    """The note on integers too large for their columns (column -> how many), or none."""
    if not overflowed:
        return []
    counts = ", ".join(f"{column}: {count}" for column, count in sorted(overflowed.items()))
    return [
        f"{sum(overflowed.values())} values do not fit 64 bits ({counts}): null in their columns, and kept "
        "exactly, as text, in the `overflow` column (a JSON object of column -> value)"
    ]


def prepare(names: Sequence[str], out_dir: str, run: str | None = None) -> tuple[dict[str, str], list[str]]:
    """Make the dataset's folders (emptied of earlier parts) and its ``_schema.json``; each input's partition
    folder, and notes (partition names that collided)."""
    _pyarrow()
    remote = "://" in out_dir
    if not remote:
        root = Path(out_dir)
        if root.exists() and not root.is_dir():
            raise BlaslogError(f"{out_dir}: not a folder; --format parquet writes a folder of files (give a new name)")
    parts, notes = partitions(names, run)
    folders = {}
    for name, run_name, rank in parts:
        folder = f"{out_dir.rstrip('/')}/run={run_name}/rank={rank}"
        _clear(folder)
        folders[name] = folder
    text = json.dumps(schema_document(), indent=2) + "\n"
    try:
        if remote:
            import fsspec

            with fsspec.open(f"{out_dir.rstrip('/')}/_schema.json", "w") as handle:
                handle.write(text)
        else:
            Path(out_dir, "_schema.json").write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BlaslogError(f"{out_dir}: cannot write _schema.json ({exc})") from None
    return folders, notes


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet
    except ImportError:
        raise BlaslogError("--format parquet needs pyarrow: pip install 'blaslog[parquet]'") from None
    return pa


def _clear(folder: str) -> None:
    """Make `folder` (a path or URL) and remove the parts an earlier run left in it."""
    if "://" in folder:
        import fsspec

        fs, path = fsspec.core.url_to_fs(folder)
        fs.makedirs(path, exist_ok=True)
        for old in fs.glob(f"{path}/part-*.parquet"):
            fs.rm(old)
        return
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BlaslogError(f"{folder}: cannot create the Parquet folder ({exc.strerror or exc})") from None
    for old in Path(folder).glob("part-*.parquet"):
        old.unlink()


def write_partition(records: Iterable[GemmCall], folder: str, overflowed: Counter[str] | None = None) -> int:
    """Write GEMM records as ``part-00000.parquet``, ``part-00001.parquet`` ... under `folder` (a path or an
    fsspec URL, made beforehand by :func:`prepare`), :data:`BATCH` records a file; the number of records."""
    pa = _pyarrow()
    import pyarrow.parquet as pq

    schema = arrow_schema()
    count = 0
    for part, batch in enumerate(_batches(records)):
        table = pa.Table.from_arrays(_columns(batch, overflowed), schema=schema)
        target = f"{folder}/part-{part:05d}.parquet"
        try:
            if "://" in folder:
                import fsspec

                with fsspec.open(target, "wb") as handle:
                    pq.write_table(table, handle)
            else:
                pq.write_table(table, target)
        except OSError as exc:
            raise BlaslogError(f"{folder}: cannot write Parquet ({exc})") from None
        count += len(batch)
    return count


_MIN, _MAX = -(1 << 63), (1 << 63) - 1


def _text(value: str) -> str:
    """`value` as Parquet can hold it (UTF-8): the bytes of a file name that is not UTF-8 (surrogates, as os.fsdecode
    gives them) written as \\xff escapes."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return name_bytes(value).decode("utf-8", "backslashreplace")
    return value


def _columns(batch: list[GemmCall], overflowed: Counter[str] | None = None) -> list[Any]:
    """The arrays of a batch, in COLUMNS order (`overflowed` counts the integers put in `overflow`, by column)."""
    import pyarrow as pa

    arrays = []
    overflow: list[dict[str, str] | None] = [None] * len(batch)
    for name, kind in COLUMNS[:-1]:
        values = [getattr(r, name) for r in batch]
        if name in _JSON:
            values = [json.dumps(dict(v)) for v in values]
        elif kind == "int64":
            for i, v in enumerate(values):
                if v is not None and not _MIN <= v <= _MAX:  # kept exactly, as text, in `overflow`
                    overflow[i] = {**(overflow[i] or {}), name: str(v)}
                    values[i] = None
                    if overflowed is not None:
                        overflowed[name] += 1
        elif kind == "string":
            values = [v if v is None else _text(v if isinstance(v, str) else str(v)) for v in values]
        arrays.append(
            pa.array(values, type=pa.int64() if kind == "int64" else pa.bool_() if kind == "bool" else pa.string())
        )
    arrays.append(pa.array([None if o is None else json.dumps(o) for o in overflow], type=pa.string()))
    return arrays


def _batches(records: Iterable[GemmCall]) -> Iterable[list[GemmCall]]:
    batch: list[GemmCall] = []
    for record in records:
        batch.append(record)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _safe(name: str) -> str:
    """A partition value that cannot climb out of the output folder."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in name).strip(".")
    return cleaned or "run"
