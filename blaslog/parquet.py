"""Records as Parquet, partitioned by run and rank, for DuckDB, Spark or pandas (`pip install 'blaslog[parquet]'`).

    blaslog parse 'logs/tp4/*.log' 'logs/tp1/*.log' --format parquet --output gemms/

writes ``gemms/run=<run>/rank=<rank>/part-00000.parquet``: the run is the input's folder name (or --run),
the rank the input's place among that run's inputs in name order. Records are written in batches, so
memory stays bounded whatever the size of the logs.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from blaslog.errors import BlaslogError
from blaslog.records import FileSummary, GemmCall

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
    out, notes, used = [], [], {}
    for folder, files in by_run.items():
        base = _safe(run or Path(folder).name or "run")
        value, number = base, 1
        while value in used:
            number += 1
            value = f"{base}-{number}"
        used[value] = folder
        if value != base:
            notes.append(f"run partition {base!r} is taken by {used[base]}: {folder} is written as run={value}")
        for ranked in assign_ranks(files, [b""] * len(files)):
            out.append((ranked.path, value, ranked.rank if ranked.rank is not None else 0))
    return out, notes


def write_parquet(names: Sequence[str], out_dir: str, records_of: Any, *,
                  run: str | None = None) -> tuple[list[FileSummary], list[str]]:
    """Write the GEMM records of each input (``records_of(name, summaries)`` yields them) under `out_dir`; the
    inputs' accounting, and notes (partition names that collided)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise BlaslogError("--format parquet needs pyarrow: pip install 'blaslog[parquet]'") from None
    from blaslog.frame import to_frame

    summaries: list[FileSummary] = []
    root = Path(out_dir)
    if root.exists() and not root.is_dir():
        raise BlaslogError(f"{out_dir}: not a folder; --format parquet writes a folder of files (give a new name)")
    parts, notes = partitions(names, run)
    for name, run_name, rank in parts:
        folder = root / f"run={run_name}" / f"rank={rank}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BlaslogError(f"{folder}: cannot create the Parquet folder ({exc.strerror or exc})") from None
        for old in folder.glob("part-*.parquet"):
            old.unlink()
        part = 0
        for batch in _batches(r for r in records_of(name, summaries) if isinstance(r, GemmCall)):
            frame = to_frame(batch)
            for column in ("extra", "pointers"):
                frame[column] = [json.dumps(dict(v)) for v in frame[column]]
            for column in frame.columns[frame.dtypes == object]:
                if column not in ("extra", "pointers"):  # integers beyond 64 bits: kept exactly, as text
                    frame[column] = [None if v is None else str(v) for v in frame[column]]
            try:
                pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / f"part-{part:05d}.parquet")
            except OSError as exc:
                raise BlaslogError(f"{folder}: cannot write Parquet ({exc})") from None
            part += 1
    return summaries, notes


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
