"""Reading inputs on a Dask cluster (`pip install 'blaslog[dask]'`): the workers read, the client merges.

    blaslog check 'logs/**/*.log' --scheduler tcp://scheduler:8786     # or DASK_SCHEDULER_ADDRESS=...
    blaslog summary 's3://bucket/run7/*.log' --scheduler local          # a LocalCluster of processes

The client plans and the workers read. Each task reads whole inputs (small ones batched, several per task, so
that 16,384 per-rank logs make a few hundred tasks, not 16,384) or one piece of a large input, cut at record
starts as :mod:`blaslog._parallel` cuts it; the pieces of one input are merged on the workers, a few at a time
(a tree), and only compact results come back: a :class:`~blaslog.runs.CompactRun` and a FileSummary per
input. The client then builds the report exactly as a local run does, so the reports are the same byte for
byte. An input is a path the workers can open (a shared file system) or an fsspec URL (``s3://``,
``gs://``, ``file://`` ...; needs fsspec and the file system's package on the workers).

Failures are reported, not lost: an input a worker cannot open is named (with the worker); a task whose
worker died is tried once more, one input per task, and an input that kills its worker twice is read as
empty with a problem that every report shows as an `input` finding. Ctrl-C cancels the tasks.

This module sits beside :mod:`blaslog._parallel`, below the library layer: it renders nothing (the parse
command hands it the functions that turn records into text).
"""

from __future__ import annotations

import atexit
import logging
import os
import pickle
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from blaslog import _parallel
from blaslog._parallel import Piece, PieceRead
from blaslog.errors import BlaslogError, InputError, LogParseError
from blaslog.formats import Sniffer
from blaslog.inputs import ENDS_EARLY, Reader, _decoded
from blaslog.parse._lines import _FileParser
from blaslog.ranks import HEAD, find_inputs, natural_key, rank_from_tags
from blaslog.records import FileSummary, GemmCall, OnError, Problem
from blaslog.runs import CompactRun, merge

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
"""The environment variable the command reads the scheduler's address from (Dask's own name for it)."""

TASK_BYTES = 256 << 20
"""Whole inputs are batched into one task up to about this many bytes."""
TASK_FILES = 64
"""... and at most this many inputs a task."""
TASKS_PER_THREAD = 4
"""Batches are made small enough to give each worker thread about this many tasks (load balance)."""
PIECE_BYTES = 64 << 20
"""An input of at least :data:`blaslog._parallel.SPLIT_MIN` bytes is cut into pieces of about this size."""
MERGE_FAN_IN = 8
"""Pieces merged by one task (the merge is a tree of such tasks)."""


# ---- the client ----------------------------------------------------------------------------------------------------


_CLIENTS: dict[str, Any] = {}


def is_url(name: str) -> bool:
    """True for an fsspec URL (`s3://...`, `file://...`), which only the workers open."""
    return "://" in name


def connect(scheduler: str, workers: int = 0) -> Any:
    """A Dask client of `scheduler` (an address, or `local` for a LocalCluster of `workers` processes, one
    per CPU up to 8 when 0), made once per process and closed at exit."""
    try:
        import dask
        import distributed
    except ImportError:
        raise BlaslogError("--scheduler needs Dask's distributed scheduler: pip install 'blaslog[dask]'") from None
    key = f"local:{workers}" if scheduler == "local" else scheduler
    client = _CLIENTS.get(key)
    if client is not None and client.status == "running":
        return client
    if scheduler == "local":
        # a task whose worker died fails at once (KilledWorker) and is retried here, once, input by input
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            local = distributed.LocalCluster(
                n_workers=workers or min(os.cpu_count() or 1, 8),
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.ERROR,
            )
        client = distributed.Client(local, set_as_default=False)
    else:
        try:
            _check_address(scheduler)  # a client made of a malformed address hung 60 s at exit (its __del__)
            client = distributed.Client(scheduler, timeout=30, set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise BlaslogError(
                f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc}); start one "
                "(`dask scheduler`, then `dask worker ADDRESS` on each machine) or give "
                "--scheduler local"
            ) from None
    _CLIENTS[key] = client
    return client


def _check_address(scheduler: str) -> None:
    """ValueError for an address Dask cannot connect to by its form (a TCP or TLS one without host and port)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(scheduler)
    if scheme in ("tcp", "tls"):
        parse_host_port(location, 8786)


@atexit.register
def close(scheduler: str | None = None) -> None:
    """Close the clients (and the LocalClusters) this process made (of `scheduler` only, when given)."""
    for key in [k for k in _CLIENTS if scheduler is None or k == scheduler]:
        client = _CLIENTS.pop(key)
        cluster = client.cluster
        client.close()
        if cluster is not None:
            cluster.close()


def find_names(names: Sequence[str], *, looks_like_log: Any = None) -> list[str]:
    """The inputs `names` stand for: local ones as :func:`blaslog.ranks.find_inputs` finds them; URLs as given,
    a URL glob (``s3://b/run/*.log``) or folder (``s3://b/run/``) listed with fsspec. Natural order."""
    local = [n for n in names if not is_url(n)]
    out = find_inputs(local, looks_like_log=looks_like_log) if local else []
    for name in names:
        if is_url(name):
            out.extend(_list_url(name))
    return sorted(dict.fromkeys(out), key=lambda n: (n != "-", natural_key(n)))


def _list_url(name: str) -> list[str]:
    import glob

    if not (glob.has_magic(name) or name.endswith("/")):
        return [name]
    try:
        import fsspec

        fs, path = fsspec.core.url_to_fs(name)
        found = fs.glob(path) if glob.has_magic(name) else fs.find(path)
        files = [p for p in found if fs.isfile(p)]
    except ImportError:
        raise InputError(
            f"{name}: listing URLs needs fsspec: pip install fsspec (and the file system's package, e.g. s3fs)"
        ) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: cannot be listed ({exc})") from None
    if not files:
        raise InputError(f"{name}: no file matches this pattern")
    return sorted((fs.unstrip_protocol(p) for p in files), key=natural_key)


# ---- reading on a worker -------------------------------------------------------------------------------------------


@dataclass
class _WorkerReader(Reader):
    """A Reader of a path or an fsspec URL that keeps the first HEAD decompressed bytes (for the rank)."""

    head: bytes = b""

    def _open(self) -> tuple[Any, list[Any]]:
        stream, closers = _open_url(self.name) if is_url(self.name) else super()._open()
        return _Tee(stream, self), closers


class _Tee:
    """Hands a stream's bytes on, keeping the first HEAD of them in `reader.head`."""

    def __init__(self, stream: Any, reader: _WorkerReader) -> None:
        self.stream, self.reader = stream, reader
        self.read1 = self._reader(getattr(stream, "read1", stream.read))
        self.read = self._reader(stream.read)

    def _reader(self, read: Callable[[int], bytes]) -> Callable[[int], bytes]:
        def tee(size: int = -1) -> bytes:
            data = read(size)
            if len(self.reader.head) < HEAD:
                self.reader.head += data[: HEAD - len(self.reader.head)]
            return data

        return tee


def _open_url(name: str) -> tuple[Any, list[Any]]:
    """The decoded byte stream of an fsspec URL, and what to close."""
    try:
        import fsspec

        handle = fsspec.open(name, "rb").open()
    except ImportError:
        raise InputError(
            f"{name}: reading URLs needs fsspec on the workers: pip install fsspec (and the file "
            "system's package, e.g. s3fs)"
        ) from None
    except FileNotFoundError:
        raise InputError(f"{name}: no such file") from None
    except PermissionError:
        raise InputError(f"{name}: permission denied") from None
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: cannot be read ({exc})") from None
    try:
        head = handle.read(8)
        handle.seek(0)
        stream, closers = _decoded(handle, head, name)
    except BaseException:
        handle.close()
        raise
    return stream, [*closers, handle]


def _worker() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "this process"


def _parser(name: str, log_format: list[str] | None, on_error: OnError, events: bool) -> _FileParser:
    """A parser of a whole input as :func:`blaslog.parse.iter_file` makes it, over a _WorkerReader."""
    return _FileParser(_WorkerReader(name), Sniffer(log_format), on_error, events)


def _tags(head: bytes) -> bytes:
    """The launcher tags of `head`, as a head that names the same ranks (a few bytes go back, not 64 KiB)."""
    return b"\n".join(b"[rank%d]:" % rank for rank in sorted(rank_from_tags(head)))


def _run_of(name: str, log_format: list[str] | None, on_error: OnError) -> tuple[CompactRun, FileSummary, bytes]:
    parser = _parser(name, log_format, on_error, events=False)
    run = parser.sink = CompactRun(name)
    run.extend(parser.records())
    return run, parser.summary, _tags(parser.reader.head)  # type: ignore[attr-defined]


def _rows_of(
    name: str, log_format: list[str] | None, on_error: OnError, kind: str, render: Callable[..., Iterable[str]]
) -> tuple[bytes, FileSummary, bytes]:
    """The rows of an input as `render(records)` writes them, compressed."""
    parser = _parser(name, log_format, on_error, events=kind == "all")
    return _Rows(render)(parser), parser.summary, _tags(parser.reader.head)  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class _Rows:
    """A parser's records as `render(records)` writes them, pickled and compressed (a job of
    :func:`blaslog._parallel.read_piece` too)."""

    render: Callable[..., Iterable[str]]

    def __call__(self, parser: _FileParser) -> bytes:
        chunks = list(self.render(parser.items()))
        return zlib.compress(pickle.dumps(chunks, pickle.HIGHEST_PROTOCOL), 1)


def _records_of(
    name: str, log_format: list[str] | None, on_error: OnError, kind: str
) -> tuple[bytes, FileSummary, bytes]:
    """Every record of an input (GEMMs only with kind `gemm`), pickled and compressed."""
    parser = _parser(name, log_format, on_error, events=kind == "all")
    found = list(parser.records())
    return zlib.compress(pickle.dumps(found, pickle.HIGHEST_PROTOCOL), 1), parser.summary, b""


def _parquet_of(
    name: str, log_format: list[str] | None, on_error: OnError, folder: str
) -> tuple[Counter[str], FileSummary, bytes]:
    """Write the GEMM records of an input as Parquet files under `folder` (a path or URL); the integers too large
    for their columns, counted by column."""
    from blaslog.parquet import write_partition

    parser = _parser(name, log_format, on_error, events=False)
    overflowed: Counter[str] = Counter()
    write_partition((r for r in parser.records() if isinstance(r, GemmCall)), folder, overflowed)
    return overflowed, parser.summary, b""


def _batch(
    job: Callable[..., Any], names: Sequence[str], args: tuple[Any, ...], extra: Sequence[Any] = ()
) -> list[Any]:
    """Run `job(name, *args[, extra])` for each input of a task; an input that cannot be opened is named."""
    out: list[Any] = []
    for i, name in enumerate(names):
        try:
            out.append(job(name, *args, *([extra[i]] if extra else [])))
        except LogParseError:
            raise  # --strict: the command stops, as it does locally
        except InputError as exc:
            out.append(_Failed(f"{exc} (read on Dask worker {_worker()})"))
    return out


def _merge(reads: list[PieceRead[CompactRun]], name: str) -> PieceRead[CompactRun]:
    """Consecutive pieces of one input as one piece (a node of the merge tree)."""
    run, summary = merge([(read.value, read.summary, read.summary.lines) for read in reads], name)
    return PieceRead(run, summary, 0)


@dataclass(slots=True)
class Renderer:
    """Records to the text of a streaming output format, on a worker: ``write(rows(records, caps, shaped),
    False)`` (rows rendered as not the output's first). The command gives the functions, so that this module
    renders nothing itself."""

    rows: Callable[..., Iterable[Any]]
    """Records to rows (blaslog.views.record_rows)."""
    write: Callable[[Iterable[Any], bool], Iterable[str]]
    """Rows to text (a streaming reporter's stream_rows)."""
    caps: Any = None
    """The caps the rows are filled in from."""
    shaped: bool = False
    """The reporter takes ShapedRow items."""

    def __call__(self, records: Iterable[Any]) -> list[str]:
        return list(self.write(self.rows(records, self.caps, self.shaped), False))


# ---- planning and waiting on the client --------------------------------------------------------------------------


@dataclass(slots=True)
class _Failed:
    """An input that could not be read (a worker could not open it)."""

    message: str


@dataclass(slots=True)
class _Unit:
    """Inputs read by one task (a batch), or one large input read in pieces."""

    names: list[str]
    pieces: list[Piece] = field(default_factory=list)
    """The pieces of the single input (empty: read whole)."""
    tries: int = 0


class _Work:
    """The tasks of one command: submitted, retried once when their worker dies, cancelled together."""

    def __init__(
        self, client: Any, job: Callable[..., Any], args: tuple[Any, ...], extra: dict[str, Any] | None = None
    ) -> None:
        self.client, self.job, self.args, self.extra = client, job, args, extra
        self.pending: dict[Any, _Unit] = {}

    def submit(self, unit: _Unit) -> Any:
        client = self.client
        if not unit.pieces:
            extra = [self.extra[name] for name in unit.names] if self.extra else []
            future = client.submit(_batch, self.job, unit.names, self.args, extra, pure=False)
        elif self.job is _run_of:
            level = self._read_pieces(unit.pieces, _parallel.run_of)
            while len(level) > 1:  # a tree of merges on the workers, MERGE_FAN_IN pieces a task
                level = [
                    client.submit(_merge, level[i : i + MERGE_FAN_IN], unit.names[0], pure=False)
                    for i in range(0, len(level), MERGE_FAN_IN)
                ]
            future = client.submit(_one_of_pieces, level[0], unit.names[0], pure=False)
        else:  # rendered rows of pieces: their rows carry line numbers, counted first
            _format, _on_error, kind, render = self.args
            pool = client.get_executor(pure=False)
            pieces = [replace(piece, events=kind == "all") for piece in _parallel.with_line_numbers(unit.pieces, pool)]
            reads = self._read_pieces(pieces, _Rows(render))
            future = client.submit(_joined_rows, reads, unit.names[0], pure=False)
        self.pending[future] = unit
        return future

    def _read_pieces(self, pieces: list[Piece], job: Callable[[_FileParser], Any]) -> list[Any]:
        """Futures of each piece read by `job` on the workers, by the driver the local pool uses too
        (:class:`blaslog._parallel.PieceReads`: the wrap width travels from each piece's reading to the next)."""
        client = self.client

        def submit(fn: Callable[..., Any], *args: Any, here: bool = False) -> Any:
            return client.submit(fn, *args, pure=False)  # every task on the workers, where the results stay

        return _parallel.PieceReads(submit, pieces, job).settled()

    def run(self, units: list[_Unit]) -> Iterator[tuple[_Unit, list[Any]]]:
        """(unit, one outcome per input of it) as tasks finish; an outcome is the task's result for the input,
        a _Failed, or a _Died.

        When a worker dies, every task it held fails (KilledWorker), not only the one that killed it. So the
        inputs of failed tasks are tried again once all else is done, one input a task and one task at a time:
        an input whose task then fails again is the one to blame."""
        from distributed import as_completed

        again: list[_Unit] = []
        try:
            for future in as_completed([self.submit(unit) for unit in units], loop=self.client.loop):
                unit = self.pending.pop(future)
                if self._failed(future) is None:
                    yield unit, self._result(future)
                else:
                    again.extend(_Unit([name], unit.pieces, tries=1) for name in unit.names)
            for unit in again:
                future = self.submit(unit)
                for _ in as_completed([future], loop=self.client.loop):
                    self.pending.pop(future)
                error = self._failed(future)
                if error is None:
                    yield unit, self._result(future)
                elif _killed(error):
                    yield unit, [_Died(name, error) for name in unit.names]
                else:
                    raise error  # not the worker: a bug, which fails the command as it would locally
        except BaseException:  # Ctrl-C among them: nothing is left running on the cluster
            self.client.cancel(list(self.pending))
            raise

    @staticmethod
    def _failed(future: Any) -> BaseException | None:
        """None for a task that finished, else its error (a BlaslogError is raised: --strict, or an input gone
        between planning and reading, ends the command as it does locally)."""
        if future.status == "finished":
            return None
        if future.status == "cancelled":
            raise BlaslogError("the Dask tasks were cancelled (by another client, or the scheduler closed)")
        error = future.exception()
        if isinstance(error, BlaslogError):
            raise error
        return error  # type: ignore[no-any-return]

    @staticmethod
    def _result(future: Any) -> list[Any]:
        outcomes = future.result()
        future.release()
        return outcomes  # type: ignore[no-any-return]


def _killed(error: BaseException | None) -> bool:
    """True when a task failed because its worker died (or left), not because of what it did."""
    try:
        from distributed.scheduler import KilledWorker
    except ImportError:  # pragma: no cover
        return False
    return isinstance(error, (KilledWorker, OSError, TimeoutError)) or type(error).__name__ == "CommClosedError"


def _one_of_pieces(read: PieceRead[CompactRun], name: str) -> list[Any]:
    """The outcome of an input read in pieces, as :func:`_run_of` gives it for a whole one."""
    with open(name, "rb") as handle:
        head = handle.read(HEAD)
    return [(read.value, read.summary, _tags(head))]


def _joined_rows(reads: list[PieceRead[bytes]], name: str) -> list[Any]:
    """The rows of consecutive pieces (numbered in the input) as one text, and the whole input's accounting."""
    summary = FileSummary(name)
    for read in reads:
        summary.absorb(read.summary)
    chunks = [chunk for read in reads for chunk in pickle.loads(zlib.decompress(read.value))]
    return [(zlib.compress(pickle.dumps(chunks, pickle.HIGHEST_PROTOCOL), 1), summary, b"")]


@dataclass(slots=True)
class _Died:
    """An input whose worker died twice while reading it."""

    name: str
    error: BaseException | None

    def summary(self) -> FileSummary:
        """The input read as empty, with a problem that reports make an `input` finding of."""
        why = f"{type(self.error).__name__}: {self.error}" if self.error is not None else "lost"
        message = (
            f"{ENDS_EARLY} (the Dask worker reading it died, twice: {why}); nothing of it was read; read "
            "it alone (without --scheduler) to see whether the input or the worker's memory is at fault"
        )
        return FileSummary(self.name, problems=[Problem(self.name, 0, message)])


def plan(
    names: Sequence[str],
    threads: int,
    files_per_task: int | None = None,
    pieces: bool = True,
    log_format: list[str] | None = None,
    on_error: OnError = OnError.WARN,
) -> list[_Unit]:
    """The tasks for reading `names` with `threads` worker threads: a large local input in pieces (when there
    are fewer inputs than threads), the others whole, in batches of neighbours (`files_per_task` each, or as
    many as keep every thread busy with about TASKS_PER_THREAD tasks, at most TASK_FILES inputs and about
    TASK_BYTES a task)."""
    units: list[_Unit] = []
    # cut large inputs only when there are fewer inputs than threads: with more, whole inputs keep every thread
    # busy, and cutting 16,384 logs of 1 GB would make the scheduler's task count (and overhead) 16 times larger
    pieces = pieces and len(names) < threads
    whole = [n for n in names if not (pieces and _splittable(n, on_error))]
    per_task = files_per_task or max(1, min(TASK_FILES, -(-len(whole) // max(threads * TASKS_PER_THREAD, 1))))
    batch: list[str] = []
    size = 0
    for name in names:
        if pieces and _splittable(name, on_error):
            count = max(2, -(-os.path.getsize(name) // PIECE_BYTES))
            units.append(_Unit([name], _parallel.cut(name, count, log_format=log_format, on_error=on_error)))
            continue
        batch.append(name)
        size += _size(name)
        if len(batch) >= per_task or size >= TASK_BYTES:
            units.append(_Unit(batch))
            batch, size = [], 0
    if batch:
        units.append(_Unit(batch))
    return units


def _splittable(name: str, on_error: OnError) -> bool:
    return not is_url(name) and _parallel.splittable(name, on_error)


def _size(name: str) -> int:
    try:
        return 0 if is_url(name) else os.path.getsize(name)
    except OSError:
        return 0


def _threads(client: Any) -> int:
    return sum(client.nthreads().values()) or 1


def _outcomes(
    client: Any,
    names: Sequence[str],
    job: Callable[..., Any],
    args: tuple[Any, ...],
    files_per_task: int | None,
    pieces: bool = True,
    extra: dict[str, Any] | None = None,
) -> Iterator[tuple[str, Any]]:
    """(input, outcome) in the order of `names`, each as soon as it and the ones before it are read."""
    log_format, on_error = args[:2]  # every job's first two arguments
    units = plan(names, _threads(client), files_per_task, pieces, log_format, on_error)
    order = {name: i for i, name in enumerate(names)}
    ready: dict[int, Any] = {}
    position = 0
    for unit, outcomes in _Work(client, job, args, extra).run(units):
        for name, outcome in zip(unit.names, outcomes, strict=True):
            ready[order[name]] = outcome
        while position in ready:
            yield names[position], ready.pop(position)
            position += 1


# ---- what the library layer and the command call ----------------------------------------------------------------


@dataclass(slots=True)
class Read:
    """The inputs the workers read."""

    names: list[str] = field(default_factory=list)
    """The inputs read, in the order given."""
    pairs: list[tuple[CompactRun, FileSummary]] = field(default_factory=list)
    """The GEMM calls and accounting of each."""
    heads: list[bytes] = field(default_factory=list)
    """What each input's first bytes tell of its rank (launcher tags), for :func:`blaslog.ranks.assign_ranks`."""
    failed: list[str] = field(default_factory=list)
    """`input: why` for each input a worker could not open."""


def read_runs(
    names: Sequence[str],
    *,
    scheduler: str,
    log_format: list[str] | None = None,
    on_error: OnError = OnError.WARN,
    workers: int = 0,
    files_per_task: int | None = None,
) -> Read:
    """The CompactRun and FileSummary of each input, read by the workers of `scheduler`."""
    client = connect(scheduler, workers)
    read = Read()
    for name, outcome in _outcomes(client, names, _run_of, (log_format, on_error), files_per_task):
        if isinstance(outcome, _Failed):
            read.failed.append(outcome.message)
            continue
        read.names.append(name)
        if isinstance(outcome, _Died):
            read.pairs.append((CompactRun(name), outcome.summary()))
            read.heads.append(b"")
            continue
        run, summary, tags = outcome
        read.pairs.append((run, summary))
        read.heads.append(tags)
    return read


def render_rows(
    names: Sequence[str],
    *,
    scheduler: str,
    render: Callable[..., Iterable[str]],
    kind: str,
    log_format: list[str] | None = None,
    on_error: OnError = OnError.WARN,
    workers: int = 0,
    summaries: list[FileSummary],
) -> Iterator[str]:
    """The rows of each input as ``render(records)`` writes them (rows that are not the output's first), input
    after input; each input's FileSummary is appended to `summaries`. `render` runs on the workers."""
    client = connect(scheduler, workers)
    outcomes = _outcomes(client, names, _rows_of, (log_format, on_error, kind, render), None)
    for items, summary in _read(outcomes, summaries):
        summaries.append(summary)
        yield from items


def parse_chunks(
    names: Sequence[str],
    reporter: Any,
    rows_of: Callable[..., Iterable[Any]],
    *,
    kind: str,
    caps: Any,
    options: Any,
    summaries: list[FileSummary],
) -> Iterator[str]:
    """The text of `blaslog parse` in `reporter`'s streaming format (as :func:`blaslog.stream.parse_chunks`
    writes it, byte for byte), the rows rendered by the workers of ``options.scheduler`` with `rows_of`
    (blaslog.views.record_rows) and the reporter's stream_rows."""
    render = Renderer(rows_of, reporter.stream_rows, caps, reporter.shaped_rows)
    yield reporter.stream_begin()
    any_rows = False
    for chunk in render_rows(
        names,
        scheduler=options.scheduler,
        render=render,
        kind=kind,
        log_format=options.formats,
        on_error=options.on_error,
        workers=options.jobs,
        summaries=summaries,
    ):
        if not chunk:
            continue
        if not any_rows and reporter.first_separator and chunk.startswith(reporter.first_separator):
            chunk = chunk[len(reporter.first_separator) :]
        any_rows = True
        yield chunk
    yield reporter.stream_end(summaries, any_rows)


def records(
    names: Sequence[str],
    *,
    scheduler: str,
    kind: str = "gemm",
    log_format: list[str] | None = None,
    on_error: OnError = OnError.WARN,
    workers: int = 0,
    summaries: list[FileSummary],
) -> Iterator[Any]:
    """The records of each input (GEMMs, or every record with `kind="all"`), read by the workers."""
    client = connect(scheduler, workers)
    outcomes = _outcomes(client, names, _records_of, (log_format, on_error, kind), None, pieces=False)
    for items, summary in _read(outcomes, summaries):
        yield from items
        summaries.append(summary)


def _read(outcomes: Iterable[tuple[str, Any]], summaries: list[FileSummary]) -> Iterator[tuple[list[Any], Any]]:
    """(items, FileSummary) of each input a worker read; an input that cannot be read raises InputError, and one
    whose worker died twice has its summary (saying so) appended to `summaries` and gives no items."""
    for _name, outcome in outcomes:
        if isinstance(outcome, _Failed):
            raise InputError(outcome.message)
        if isinstance(outcome, _Died):
            summaries.append(outcome.summary())
            continue
        data, summary, _ = outcome
        yield pickle.loads(zlib.decompress(data)), summary


def write_parquet(
    names: Sequence[str],
    out_dir: str,
    *,
    scheduler: str,
    run: str | None = None,
    log_format: list[str] | None = None,
    on_error: OnError = OnError.WARN,
    workers: int = 0,
) -> tuple[list[FileSummary], list[str], list[str]]:
    """Write the GEMM records of each input as Parquet under `out_dir` (a folder the workers can write to, or a
    URL), each input's files written by the worker that reads it (see :mod:`blaslog.parquet`); the inputs'
    accounting, notes, and `input: why` for those that could not be read."""
    from blaslog.parquet import overflow_notes, prepare

    client = connect(scheduler, workers)
    folders, notes = prepare(names, out_dir, run)
    summaries, failed = [], []
    overflowed: Counter[str] = Counter()
    for _name, outcome in _outcomes(
        client, names, _parquet_of, (log_format, on_error), None, pieces=False, extra=folders
    ):
        if isinstance(outcome, _Failed):
            failed.append(outcome.message)
        elif isinstance(outcome, _Died):
            summaries.append(outcome.summary())
        else:
            overflowed.update(outcome[0])
            summaries.append(outcome[1])
    return summaries, notes + overflow_notes(overflowed), failed


__all__ = [
    "SCHEDULER_ENV",
    "Read",
    "Renderer",
    "close",
    "connect",
    "find_names",
    "is_url",
    "parse_chunks",
    "plan",
    "read_runs",
    "records",
    "render_rows",
    "write_parquet",
]
