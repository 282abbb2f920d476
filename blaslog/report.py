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
from dataclasses import dataclass, field
from typing import Any

from blaslog.records import SCHEMA_VERSION, FileSummary

#: Finding classes, most severe first, with what each means.
CLASSES: dict[str, str] = {
    "precision": "the arithmetic differs (operation type, input type, accumulator, data or compute types, flags)",
    "unknown": "the algorithm differs and nothing says whether its arithmetic does (give --caps or run blaslog probe)",
    "reduction": "the summation order across K differs (split-K count or reduction scheme)",
    "schedule": "same arithmetic and reduction, other tiling or scheduling (tile, stages, swizzling, cluster ...)",
    "input": "part of an input could not be read, which may hide GEMMs",
}

SEVERITY = {"precision": 4, "unknown": 3, "reduction": 2, "schedule": 1, "input": 0}

#: --fail-on thresholds: the classes that make the exit status 1.
FAIL_ON: dict[str, frozenset[str]] = {
    "precision": frozenset({"precision", "unknown"}),
    "reduction": frozenset({"precision", "unknown", "reduction"}),
    "schedule": frozenset({"precision", "unknown", "reduction", "schedule"}),
    "any": frozenset({"precision", "unknown", "reduction", "schedule", "input"}),
    "never": frozenset(),
}

#: How CI formats show each class.
LEVEL = {"precision": "error", "unknown": "warning", "reduction": "warning", "schedule": "notice", "input": "warning"}


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
class Finding:
    """One thing to look at, classed by its effect on numerics."""

    kind: str
    """`tp_algo_diff`, `tp_solution_diff`, `tp_type_diff`, `same_signature_different_algo`,
    `same_signature_different_flags`, `batch_dependent_algo`, `unparsable_input`."""
    cls: str
    """One of CLASSES."""
    title: str
    """One line."""
    explanation: str
    """What differs, what it likely does, what a person can do."""
    location: Location
    """The primary place (the sharded record, the first variant ...)."""
    related: tuple[Location, ...] = ()
    """Other places (the unsharded record, other variants)."""
    fields: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """Each differing field: (log key name, (value in the first run or variant, value in the other ...))."""
    count: int = 1
    """How many identical occurrences were folded into this finding."""
    data: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Structured detail for JSON (records, occurrences, variants)."""

    @property
    def level(self) -> str:
        """`error`, `warning` or `notice`."""
        return LEVEL.get(self.cls, "warning")

    def fingerprint(self) -> str:
        """A stable id: the same finding in another run of the same job gets the same fingerprint."""
        basis = {
            "kind": self.kind,
            "cls": self.cls,
            "fields": [[name, [_jsonable(v) for v in values]] for name, values in self.fields],
            "key": self.data.get("key", self.title),
        }
        return hashlib.sha256(json.dumps(basis, sort_keys=True).encode()).hexdigest()[:32]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the class is under `class`)."""
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
        out.update({k: v for k, v in self.data.items() if k != "key"})
        return out


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
    """The command's main table (records for parse, signatures for summary, findings for diff/check)."""
    columns: list[str] = field(default_factory=list)
    """Columns of `rows` for table and CSV output (all keys when empty)."""
    sections: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    """Extra titled tables for humans (summary by class, TP inference, unmatched calls ...)."""
    document: dict[str, Any] = field(default_factory=dict)
    """The JSON body (schema_version and command are added by the JSON reporter)."""
    files: list[FileSummary] = field(default_factory=list)
    """Accounting of every input."""
    notes: list[str] = field(default_factory=list)
    """Short remarks for stderr (TP inference, warnings)."""
    cases: list[Case] = field(default_factory=list)
    """What was checked, one case each (a compared GEMM pair, a signature, an input), for JUnit."""
    failed: list[str] = field(default_factory=list)
    """Inputs that could not be read at all (each reported as an error; the exit status is then 2)."""
    fail_on: str = "precision"
    """The --fail-on threshold the report was made for: findings of the classes it names fail the run."""

    def exit_status(self, fail_on: str) -> int:
        """0 when no finding is at or above `fail_on`, else 1."""
        wanted = FAIL_ON[fail_on]
        return 1 if any(f.cls in wanted for f in self.findings) else 0

    def to_json(self) -> dict[str, Any]:
        """The whole JSON document."""
        doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": self.command}
        doc.update(self.document)
        doc.setdefault("findings", [f.to_dict() for f in self.findings])
        doc.setdefault("summary", {"files": [s.to_dict() for s in self.files]})
        return doc


def sort_findings(findings: list[Finding]) -> list[Finding]:
    """Most severe first, then by file and line (deterministic)."""
    return sorted(findings, key=lambda f: (-SEVERITY.get(f.cls, 0), f.location.file, f.location.line, f.title))


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)
