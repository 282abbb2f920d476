"""What the commands hand to reporters: findings, rows and sections, renderer-neutral.

Every command (parse, diff, check, summary) builds one :class:`Report`; every
reporter in ``blaslog.reporters`` renders any Report. A :class:`Finding` is
one thing a person should look at (an algorithm difference between runs, a
signature that switched algorithm inside a run, an unreadable line), with a
class that says what it does to the numbers.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from blaslog.ranks import compact_ranks
from blaslog.records import SCHEMA_VERSION, FileSummary


class FindingKind(StrEnum):
    """The finding classes (a Finding's `cls`), most severe first; their rows are in FINDING_CLASSES. A StrEnum:
    a member is its name as a str, so JSON, SARIF and the tables write it as before."""

    PRECISION = "precision"
    INPUT = "input"
    UNKNOWN = "unknown"
    REDUCTION = "reduction"
    SCHEDULE = "schedule"


class FailOn(StrEnum):
    """--fail-on thresholds (see THRESHOLDS): the lowest class that fails the run, `any`, or `never`."""

    PRECISION = "precision"
    REDUCTION = "reduction"
    SCHEDULE = "schedule"
    ANY = "any"
    NEVER = "never"


class RecordKind(StrEnum):
    """What `parse` reports: the executed GEMMs, or every record (API calls, errors, info too)."""

    GEMM = "gemm"
    ALL = "all"


class Level(StrEnum):
    """CI annotation levels: a finding that fails the run is an `error`, else its class's level."""

    ERROR = "error"
    WARNING = "warning"
    NOTICE = "notice"


@dataclass(frozen=True, slots=True)
class FindingClass:
    """Everything about one finding class, for every command and every reporter: one row of FINDING_CLASSES."""

    name: FindingKind
    """`precision`, `unknown`, `reduction`, `schedule` or `input` (a finding's `cls`; SARIF rule `blaslog/<name>`)."""
    rank: int
    """Severity: a higher rank is worse. Findings sort by it, and --fail-on thresholds are ranks."""
    meaning: str
    """One line: what a finding of this class says about the numbers (--help, summary tables, SARIF)."""
    level: Level
    """CI annotation level of a finding that does not fail the run (`warning` or `notice`); one that fails the
    run (its class is at or above the --fail-on threshold) is always `error`."""
    help: str
    """What a person can do about it (SARIF rule help)."""
    gitlab_severity: str
    """GitLab Code Quality severity (`info`, `minor`, `major`, `critical` or `blocker`)."""
    rule_name: str
    """SARIF rule name (a short kebab-case id)."""
    short: str
    """SARIF rule short description."""
    color: str = "#6b7280"
    """Its colour in pictures and on a terminal (CSS hex; the HTML report's badges and map marks)."""
    ansi: str = "0"
    """Its SGR colour code on a terminal (`1;31` bold red ...), when colour is on."""


#: Every finding class, most severe first: the only place a class is described.
FINDING_CLASSES: Mapping[str, FindingClass] = MappingProxyType(
    {
        row.name: row
        for row in (
            FindingClass(
                FindingKind.PRECISION,
                5,
                "the arithmetic differs (operation type, input type, accumulator, data or compute types, flags)",
                Level.WARNING,
                "The two GEMMs ran different arithmetic. Align the math mode (TF32 on or off in both runs, the same "
                "compute type, the same rocBLAS flags) or pin the algorithm.",
                "critical",
                "gemm-precision-difference",
                "GEMM algorithm difference: precision",
                color="#d62728",
                ansi="1;31",
            ),
            FindingClass(
                FindingKind.INPUT,
                4,
                "part of an input could not be read, or too little of it was compared: it may hide any other class",
                Level.WARNING,
                "Part of an input could not be read (unparsable lines, a cut compressed stream) or too few GEMM calls "
                "were paired; GEMMs may be missing from the comparison, so it fails the run like a precision "
                "difference would.",
                "minor",
                "unreadable-input",
                "Unreadable input",
                color="#9467bd",
                ansi="1;35",
            ),
            FindingClass(
                FindingKind.UNKNOWN,
                3,
                "the algorithm differs and nothing says whether its arithmetic does (give --caps or run blaslog probe)",
                Level.WARNING,
                "The algorithm differs and the log does not say whether the arithmetic does. Run `blaslog probe "
                "--from LOG -o caps.json` on a machine with the GPU and pass --caps caps.json.",
                "major",
                "gemm-unknown-difference",
                "GEMM algorithm difference: unknown",
                color="#ff7f0e",
                ansi="1;33",
            ),
            FindingClass(
                FindingKind.REDUCTION,
                2,
                "the summation order across K differs (split-K count or reduction scheme)",
                Level.WARNING,
                "Split-K or the reduction scheme differs: the summation order changes. Pin the algorithm or give both "
                "runs the same workspace limit, or compare with a reordering-aware tolerance.",
                "minor",
                "gemm-reduction-difference",
                "GEMM algorithm difference: reduction",
                color="#1f77b4",
                ansi="1;34",
            ),
            FindingClass(
                FindingKind.SCHEDULE,
                1,
                "same arithmetic and reduction, other tiling or scheduling (tile, stages, swizzling, cluster ...)",
                Level.NOTICE,
                "Tiling or scheduling differs with the same arithmetic; rarely the cause of a large mismatch.",
                "info",
                "gemm-schedule-difference",
                "GEMM algorithm difference: schedule",
                color="#2ca02c",
                ansi="32",
            ),
        )
    }
)

#: --fail-on values and the lowest rank that fails the run at each (None: nothing does). `precision` starts at
#: `unknown` because an unknown difference may be a precision one, and includes `input` because what was not read
#: may hide one: a gate must not pass on what it could not see.
THRESHOLDS: Mapping[str, int | None] = MappingProxyType(
    {
        FailOn.PRECISION: FINDING_CLASSES[FindingKind.UNKNOWN].rank,
        FailOn.REDUCTION: FINDING_CLASSES[FindingKind.REDUCTION].rank,
        FailOn.SCHEDULE: FINDING_CLASSES[FindingKind.SCHEDULE].rank,
        FailOn.ANY: min(row.rank for row in FINDING_CLASSES.values()),
        FailOn.NEVER: None,
    }
)

#: Class name -> meaning, most severe first (derived from FINDING_CLASSES).
CLASSES: dict[str, str] = {row.name: row.meaning for row in FINDING_CLASSES.values()}

#: --fail-on thresholds: the classes that make the exit status 1 (derived from THRESHOLDS and the ranks).
FAIL_ON: dict[str, frozenset[str]] = {
    threshold: frozenset(row.name for row in FINDING_CLASSES.values() if lowest is not None and row.rank >= lowest)
    for threshold, lowest in THRESHOLDS.items()
}


def finding_class(name: str) -> FindingClass:
    """The row of class `name`; ValueError for a name that is not a finding class."""
    try:
        return FINDING_CLASSES[name]
    except KeyError:
        raise ValueError(f"unknown finding class {name!r}; known: {', '.join(FINDING_CLASSES)}") from None


def fails(cls: str, fail_on: str) -> bool:
    """True when a finding of class `cls` fails the run at --fail-on `fail_on` (exit status 1, JUnit failure,
    SARIF and GitHub level `error`)."""
    return finding_class(cls).name in _failing(fail_on)


def _failing(fail_on: str) -> frozenset[str]:
    try:
        return FAIL_ON[fail_on]
    except KeyError:
        raise ValueError(f"unknown --fail-on value {fail_on!r}; known: {', '.join(FAIL_ON)}") from None


def ci_level(cls: str, fail_on: str) -> Level:
    """`error` when the class fails the run at `fail_on`, else the class's own level (`warning` or `notice`)."""
    return Level.ERROR if fails(cls, fail_on) else finding_class(cls).level


@dataclass(frozen=True, slots=True)
class Location:
    """A place a finding points at."""

    file: str
    """Input file."""
    line: int
    """1-based line."""
    role: str = ""
    """What is there (`sharded`, `unsharded`, `variant 2` ...)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"file": self.file, "line": self.line, "role": self.role}


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One compared pair of GEMMs that showed a diff finding's difference."""

    sharded_line: int
    """Line of the sharded record."""
    unsharded_line: int
    """Line of the unsharded record."""
    sharded_thread: str | None = None
    """Thread of the sharded record, when the log names it."""
    unsharded_thread: str | None = None
    """Thread of the unsharded record, when the log names it."""
    rank: str = ""
    """The rank of the sharded run it was seen on, once findings of several ranks are folded (else empty)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (`rank` only when set)."""
        out: dict[str, Any] = {
            "sharded_line": self.sharded_line,
            "unsharded_line": self.unsharded_line,
            "sharded_thread": self.sharded_thread,
            "unsharded_thread": self.unsharded_thread,
        }
        if self.rank:
            out["rank"] = self.rank
        return out


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing to look at, classed by its effect on numerics."""

    kind: str
    """`tp_algo_diff`, `tp_solution_diff`, `tp_type_diff`, `same_signature_different_algo`,
    `same_signature_different_flags`, `batch_dependent_algo`, `unparsable_input`."""
    cls: str
    """A key of FINDING_CLASSES (anything else raises ValueError)."""
    title: str
    """One line."""
    explanation: str
    """What differs, what it likely does, what a person can do."""
    location: Location
    """The primary place (the sharded record, the first variant ...)."""
    related: tuple[Location, ...] = ()
    """Other places (the unsharded record, other variants, the same difference on other ranks)."""
    fields: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """Each differing field: (log key name, (value in the first run or variant, value in the other ...))."""
    count: int = 1
    """How many identical occurrences were folded into this finding."""
    key: str = ""
    """What names the cause, with `kind`, `cls` and `fields`, in the fingerprint (the title when empty). It holds no
    line, and no file that differs between ranks or runs, so the same cause keeps its fingerprint."""
    occurrences: tuple[Occurrence, ...] = ()
    """Every compared pair that showed the difference (diff findings)."""
    ranks: tuple[str, ...] = ()
    """The ranks the finding was seen on, once findings of several ranks are folded (see fold_ranks)."""
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Further detail for JSON only (the records, variants, ranges ...)."""
    gemms: tuple[Any, ...] = field(default=(), compare=False, hash=False, repr=False)
    """The two GEMM records (GemmCall) whose arithmetic the finding compares, first and second (the sharded and
    unsharded record; the first and the most different variant), for ``--emulate``; never in JSON."""

    def __post_init__(self) -> None:
        finding_class(self.cls)  # an unknown class is a bug: no reporter would know how to show it

    @property
    def finding_class(self) -> FindingClass:
        """The row of FINDING_CLASSES for `cls`."""
        return FINDING_CLASSES[self.cls]

    def fingerprint(self) -> str:
        """A stable id: the same finding in another run of the same job (and on any rank) gets the same fingerprint."""
        basis = {
            "kind": self.kind,
            "cls": self.cls,
            "fields": [[name, [_jsonable(v) for v in values]] for name, values in self.fields],
            "key": self.key or self.title,
        }
        return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the class is under `class`; `occurrences` and `ranks` only when there are any)."""
        out: dict[str, Any] = {
            "kind": self.kind,
            "class": self.cls,
            "title": self.title,
            "fields": {name: [_jsonable(v) for v in values] for name, values in self.fields},
            "count": self.count,
            "explanation": self.explanation,
            "location": self.location.to_dict(),
            "related": [loc.to_dict() for loc in self.related],
            "fingerprint": self.fingerprint(),
        }
        if self.ranks:
            out["ranks"] = list(self.ranks)
        out.update(self.data)
        if self.occurrences:
            out["occurrences"] = [o.to_dict() for o in self.occurrences]
        return out


def rank_span(ranks: Sequence[str]) -> str:
    """`rank 3`, `ranks 0-7`, `ranks 0,2,5-6` (integer runs joined with a dash; other names listed as they are)."""
    if not ranks:
        return ""
    numeric = all(r.isdigit() for r in ranks)
    text = compact_ranks(int(r) for r in ranks) if numeric else ",".join(dict.fromkeys(ranks))
    return ("rank " if len(ranks) == 1 else "ranks ") + text


def fold_ranks(findings_per_rank: Sequence[tuple[str | int, Sequence[Finding]]]) -> list[Finding]:
    """One finding per cause across ranks: findings of several ranks with the same fingerprint (kind, class,
    fields and key) become one, with the ranks named (`ranks 0-3: ` before the title), counts summed, occurrences
    labelled with their rank, and the other ranks' places among the related locations.

    The folded finding keeps the fingerprint of the ranks' findings (no rank or file in it), so it is the same
    whatever the number of ranks; the result has one finding per fingerprint, most severe first.
    """
    groups: dict[str, list[tuple[str, Finding]]] = {}
    for rank, findings in findings_per_rank:
        for finding in findings:
            groups.setdefault(finding.fingerprint(), []).append((str(rank), finding))
    return sort_findings([_fold(group) for group in groups.values()])


def _fold(group: list[tuple[str, Finding]]) -> Finding:
    first_rank, first = group[0]
    ranks = tuple(dict.fromkeys(rank for rank, _ in group))
    related: dict[tuple[str, int], Location] = {}
    for rank, finding in group:
        if finding is not first:
            loc = finding.location
            related.setdefault((loc.file, loc.line), Location(loc.file, loc.line, f"{loc.role} rank {rank}".strip()))
        for loc in finding.related:
            related.setdefault((loc.file, loc.line), loc)
    related.pop((first.location.file, first.location.line), None)
    occurrences = tuple(replace(o, rank=rank) for rank, finding in group for o in finding.occurrences)
    return replace(
        first,
        title=f"{rank_span(ranks)}: {first.title}",  # first: CI annotations cut long titles
        location=replace(first.location, role=f"{first.location.role} rank {first_rank}".strip()),
        related=tuple(related.values()),
        count=sum(f.count for _, f in group),
        key=first.key or first.title,
        occurrences=occurrences,
        ranks=ranks,
    )


@dataclass(frozen=True, slots=True)
class Case:
    """One thing that was checked, with the findings it produced (for JUnit)."""

    name: str
    """Test case name (unique within its classname)."""
    classname: str
    """Group (the input file, or the pair of files)."""
    file: str = ""
    """Input file."""
    line: int = 0
    """Line of the checked record."""
    failures: tuple[Finding, ...] = ()
    """Findings of this case (none: it passed)."""


@dataclass(slots=True)
class Report:
    """A command's result, ready for any reporter."""

    command: str
    """`parse`, `diff`, `check` or `summary`."""
    findings: list[Finding] = field(default_factory=list)
    """Findings, most severe first."""
    rows: list[dict[str, Any]] = field(default_factory=list)
    """The command's main table (records for parse, signatures for summary); for diff and check it is made from
    the findings when rendered (see table_rows)."""
    columns: list[str] = field(default_factory=list)
    """Columns of `rows` for table and CSV output (all keys when empty)."""
    sections: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    """Extra titled tables for humans (summary by class, TP inference, unmatched calls ...)."""
    document: dict[str, Any] = field(default_factory=dict)
    """The JSON body (schema_version, command and the findings are added by to_json)."""
    files: list[FileSummary] = field(default_factory=list)
    """Accounting of every input."""
    notes: list[str] = field(default_factory=list)
    """Short remarks for stderr (TP inference, warnings)."""
    cases: list[Case] = field(default_factory=list)
    """What was checked, one case each (a compared GEMM pair, a signature, an input), for JUnit."""
    failed: list[str] = field(default_factory=list)
    """Inputs that could not be read at all (each reported as an error; the exit status is then 2)."""
    fail_on: str = "precision"
    """The --fail-on threshold the report was made for (a key of FAIL_ON): findings at or above it fail the run,
    and every CI format says so (JUnit failure, SARIF and GitHub level `error`)."""
    gemm_map: dict[str, Any] = field(default_factory=dict)
    """The algorithm map for pictures (the HTML report): GEMM signatures in call order (`columns`), one row per
    run or rank (`rows`, each with `cells`: the algorithms a signature ran there, call counts, first line and the
    finding it showed); aggregated per signature, never per call. Empty when the command built none; not part of
    the JSON document (see blaslog.views.GemmMap)."""
    pinning: Any = None
    """For a diff asked for TunableOp pins (`blaslog diff --emit-tunableop`: api.diff or api.diff_command with
    `pin`): the Pinning of blaslog.tunableop, whose ``render`` is the file to write; None otherwise. Not part of
    the JSON document."""

    def fails(self, finding: Finding) -> bool:
        """True when `finding` fails the run at `fail_on`."""
        return fails(finding.cls, self.fail_on)

    def level(self, finding: Finding) -> str:
        """The CI level of `finding` at `fail_on`: `error` when it fails the run, else its class's level."""
        return ci_level(finding.cls, self.fail_on)

    def exit_status(self, fail_on: str | None = None) -> int:
        """2 when an input could not be read at all (as the command line exits); else 1 when a finding is at or
        above `fail_on` (by default the report's own), else 0."""
        if self.failed:
            return 2
        wanted = _failing(self.fail_on if fail_on is None else fail_on)
        return 1 if any(f.cls in wanted for f in self.findings) else 0

    def finding_dict(self, finding: Finding) -> dict[str, Any]:
        """A finding for JSON, with its CI `level` at `fail_on`."""
        return {**finding.to_dict(), "level": self.level(finding)}

    def finding_row(self, finding: Finding) -> dict[str, Any]:
        """A finding as one flat table row (CSV), with its CI `level` at `fail_on`."""
        return {
            "class": finding.cls,
            "level": self.level(finding),
            "kind": finding.kind,
            "count": finding.count,
            "file": finding.location.file,
            "line": finding.location.line,
            "related": "; ".join(f"{r.role} {r.file}:{r.line}" for r in finding.related[:5]),
            "title": finding.title,
            "fields": {k: list(v) for k, v in finding.fields},
            "explanation": finding.explanation,
            "fingerprint": finding.fingerprint(),
        }

    def table_rows(self) -> list[dict[str, Any]]:
        """The main table: `rows`, or for diff and check one row per finding."""
        if self.command in ("diff", "check") and not self.rows:
            return [self.finding_row(f) for f in self.findings]
        return self.rows

    def __repr__(self) -> str:
        counts = ", ".join(f"{n} {cls}" for cls, n in self._class_counts().items()) or "no findings"
        rows = f", {len(self.rows)} rows" if self.rows else ""
        return (
            f"<Report {self.command}: {counts}{rows}, {len(self.files)} inputs, fail_on={self.fail_on!r}, "
            f"exit status {self.exit_status()}>"
        )

    def _class_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(FINDING_CLASSES, 0)
        for finding in self.findings:
            counts[finding.cls] += 1
        return {name: n for name, n in counts.items() if n}

    def _repr_html_(self, max_findings: int = 20) -> str:
        """A short HTML summary for notebooks (the verdict and the first findings; the whole page is
        ``--format html``). Every log text escaped."""
        import html

        def esc(value: object) -> str:
            return html.escape(str(value), quote=True)

        failing = sum(1 for f in self.findings if self.fails(f))
        badges = " ".join(
            f'<span style="background:{FINDING_CLASSES[cls].color};color:#fff;border-radius:8px;'
            f'padding:0 6px">{esc(cls)} {n}</span>'
            for cls, n in self._class_counts().items()
        )
        rows = "".join(
            f'<tr><td style="color:{f.finding_class.color};font-weight:600">{esc(f.cls)}</td><td>{f.count}</td>'
            f"<td>{esc(f.title)}</td><td><code>{esc(f.location.file)}:{f.location.line}</code></td></tr>"
            for f in self.findings[:max_findings]
        )
        more = (
            f"<p>{len(self.findings) - max_findings} more findings: <code>report.findings_frame()</code></p>"
            if len(self.findings) > max_findings
            else ""
        )
        table = (
            f"<table><thead><tr><th>class</th><th>count</th><th>title</th><th>where</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>{more}"
            if rows
            else ""
        )
        rows_text = f", {len(self.rows)} rows" if self.rows else ""
        head = (
            f"<b>blaslog {esc(self.command)}</b>: {len(self.findings)} findings, {failing} at or above "
            f"--fail-on {esc(self.fail_on)}; {len(self.files)} inputs{rows_text}"
        )
        return f"<div>{head} {badges}{table}</div>"

    def findings_frame(self) -> Any:
        """A pandas DataFrame with one row per finding: class, level, kind, title, signature, fields, count,
        ranks, file, line, fingerprint (needs pandas)."""
        from blaslog.frame import findings_frame

        return findings_frame(
            [
                {
                    "class": finding.cls,
                    "level": self.level(finding),
                    "kind": finding.kind,
                    "title": finding.title,
                    "signature": _signature_text(finding.data),
                    "fields": "; ".join(
                        f"{name}: {' vs '.join('-' if v is None else str(v) for v in values)}"
                        for name, values in finding.fields
                    ),
                    "count": finding.count,
                    "ranks": ",".join(finding.ranks),
                    "file": finding.location.file,
                    "line": finding.location.line,
                    "fingerprint": finding.fingerprint(),
                }
                for finding in self.findings
            ]
        )

    def to_json(self) -> dict[str, Any]:
        """The whole JSON document (the findings go before the inputs' summary)."""
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": self.command}
        if self.command in ("diff", "check"):
            doc["fail_on"] = self.fail_on
        findings = [self.finding_dict(f) for f in self.findings]
        for key, value in self.document.items():
            if key == "summary":
                doc["findings"] = findings
            doc[key] = value
        doc["findings"] = findings
        doc.setdefault("summary", {"files": [s.to_dict() for s in self.files]})
        if self.failed:
            doc["failed"] = list(self.failed)  # inputs not read at all: the run exits 2 whatever was found
        return doc


def _signature_text(data: Mapping[str, Any]) -> str:
    """The GEMM a finding is about, from its JSON detail: a check's signature, or a diff's two shapes."""

    def one(record: Mapping[str, Any]) -> str:
        types = "/".join(str(record[k]) for k in ("a_type", "compute_type") if record.get(k))
        return " ".join(
            str(p)
            for p in (
                record.get("function"),
                record.get("trans"),
                f"{record.get('m')}x{record.get('n')}x{record.get('k')}",
                types,
            )
            if p
        )

    if isinstance(data.get("signature"), Mapping):
        return one(data["signature"])
    if isinstance(data.get("sharded"), Mapping) and isinstance(data.get("unsharded"), Mapping):
        return f"{one(data['sharded'])} vs {one(data['unsharded'])}"
    return ""


def unique_fingerprints(findings: Sequence[Finding]) -> list[str]:
    """The findings' fingerprints, made unique within the list for formats that key on them (GitLab): a repeated
    one (the same cause in two inputs of a check, say) is hashed again with its place and ordinal. Deterministic,
    and the first finding with a fingerprint keeps it."""
    seen: dict[str, int] = {}
    out = []
    for finding in findings:
        fingerprint = finding.fingerprint()
        seen[fingerprint] = seen.get(fingerprint, 0) + 1
        if seen[fingerprint] > 1:
            basis = f"{fingerprint}|{finding.location.file}|{finding.location.line}|{seen[fingerprint]}"
            fingerprint = hashlib.sha256(basis.encode()).hexdigest()[:32]
        out.append(fingerprint)
    return out


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first, then by file and line (deterministic)."""
    return sorted(findings, key=lambda f: (-finding_class(f.cls).rank, f.location.file, f.location.line, f.title))


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
