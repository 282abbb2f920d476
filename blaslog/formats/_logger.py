"""What cuBLASLt's and hipBLASLt's loggers share: `[time][LIB][tid][Level][function] key=value ...` lines.

The grammar (``grammars/kv.lark``) parses every message generically into
(key, value) pairs, values being strings or groups of pairs; this module turns
a matmul ``[Trace]`` line into a :class:`GemmCall` and any other line into an
:class:`Event`, keeping every key it does not model.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import blaslog._lark as _lark
from blaslog.formats._base import LeafTransformer, LogFormat, RecordError, Slot, concat, to_int, transpose
from blaslog.records import Event, GemmCall

Pairs = tuple[tuple[str, Any], ...]

KNOWN_LEVELS = frozenset(
    {
        "api",
        "info",
        "trace",
        "hint",
        "hints",
        "error",
        "debug",
        "warning",
        "warn",
        "bench",
        "profile",
        "extendedprofile",
    }
)
LEVEL_EVENTS = {"api": "api", "error": "error", "info": "info", "trace": "trace", "hint": "hint", "hints": "hint"}

MATMUL_KEYS = frozenset(
    {
        "A",
        "Adesc",
        "B",
        "Bdesc",
        "C",
        "Cdesc",
        "D",
        "Ddesc",
        "computeDesc",
        "workSpace",
        "workSpaceSizeInBytes",
        "beta",
        "stream",
    }
)
"""Top-level keys of both loggers' matmul line (each dialect's `known_keys` adds its own)."""
_LOGGED_MATMUL = ("A", "Adesc", "B", "Bdesc", "C", "Cdesc", "D", "Ddesc", "computeDesc")
"""The matmul keys both loggers always write: a partial record names those it does not show."""
_ELIDED_PAIR = re.compile(r"(?<![^\s\]])([A-Za-z_]\w*)=(?:\[(?:\.\.\.|…)\]|\.\.\.|…)(?=\s|$)")
"""`B=...` or `Bdesc=[...]`: a pair whose value a person left out."""
_BARE_ELISION = re.compile(r"(?<!\S)(?:\.\.\.|…)(?=\s|$)")
"""A `...` standing for pairs a person left out."""
_PAIR_KEY = re.compile(r"(?<![^\s\]])([A-Za-z_]\w*)=")

# Keys that start a continuation of a record a person wrapped over several lines.
_CONTINUATION_KEY = re.compile(r"^(?:#\s+)?[A-Za-z_][\w.]*=")
# Inside an open group a wrapped line goes on with a pair or closes the group; anything else (a program's
# `step 17 loss=4.21`) is not part of the record.
_INSIDE_GROUP = re.compile(r"^(?:#\s*)?(?:[A-Za-z_][\w.]*(?:\[\w+\])?=|\])")
_POINTER = re.compile(r"(?:0x)?0[xX][0-9a-fA-F]+")  # cuBLAS prints some pointers as 0x0x7f...: one too
_WORD = re.compile(
    r"(?<==)(?!0[xX])"  # right after a key's `=`; not a pointer (POINTER would read it)
    r"([\w]*(?:\d\w*[A-Za-z_]|[A-Za-z_]\w*\d)\w*)"  # letters and digits: an enum name (`R_16F`)
    r"(?=\]|\s+[^\s|]|\s*$)",  # the whole value: not a key (`[out]=`), nor the first of an `A | B` mask
    re.ASCII,
)
"""A value that kv.lark reads as one TOKEN whatever word it is (see LogFormat.words): after `=` (so not an
EMPTY_VALUE), ending at a space, a `]` or the end (so not an OUT_KEY or part of a longer token)."""
_PREFIX = re.compile(
    r"(?:\[(?P<time>\d{4}-\d\d-\d\d[ T][\d:.]+)\])?(?:\[(?:\.\.\.|…)\]|\[(?P<library>[A-Za-z]+)\]"
    r"\[(?P<thread>\d+)\])?\[(?P<level>[A-Za-z]+)\]\[(?P<function>[^\]\s]+)\]"
)


class KvTransformer(LeafTransformer):
    """Grammar tree -> (timestamp, library, thread, level, function, pairs, words)."""

    def start(self, children: list[Any]) -> tuple[Any, ...]:
        if len(children) == 6:
            return tuple(children)
        return (None, *children)

    def elided(self, children: list[Any]) -> tuple[Any, ...]:
        """A line whose prefix a person cut down to `[Level][function]` (or `[Level][...]`): no time stamp,
        library or thread."""
        if len(children) == 2:  # the function was elided too
            return (None, None, None, children[0], "?", children[1])
        return (None, None, None, *children)

    def message(self, children: list[Any]) -> Pairs:
        return tuple(children)

    def kv__pair(self, children: list[Any]) -> tuple[Any, Any]:
        return (children[0], children[1])

    def kv__empty_pair(self, children: list[Any]) -> tuple[Any, Any]:
        return (children[0], "")

    def kv__scalars(self, children: list[Any]) -> Any:
        return children[0] if len(children) == 1 else " | ".join(children)

    def kv__group(self, children: list[Any]) -> Pairs:
        return tuple(children)

    def kv__word(self, children: list[Any]) -> tuple[str, Any]:
        return ("", children[0])


class LoggerFormat(LogFormat):
    """A `[time][LIB][tid][Level][function] message` logger (cuBLASLt, hipBLASLt)."""

    transformer = KvTransformer
    words = _WORD
    known_keys: frozenset[str] = frozenset()
    """Top-level keys of the matmul line: a physical line starting with one continues a wrapped record."""

    def continues(self, lines: list[str], line: str) -> bool:
        last = lines[-1]
        if last.endswith("\\"):
            return True
        if self.start.match(line):
            return False
        opened = sum(text.count("[") - text.count("]") for text in lines)
        if opened > 0 and not line.startswith("["):
            return _INSIDE_GROUP.match(line.lstrip()) is not None
        match = _CONTINUATION_KEY.match(line.lstrip())
        if match is None:
            return False
        key = match.group(0).lstrip("# \t").rstrip("=")
        return key in self.known_keys

    def interleaved(self, lines: list[str]) -> bool:
        """Other text between the lines of a record a person wrapped leaves it open while a group is not closed
        or a line ends with a `\\` continuation."""
        return lines[-1].endswith("\\") or sum(text.count("[") - text.count("]") for text in lines) > 0

    def unfinished(self, lines: list[str]) -> bool:
        """A record that later lines would continue (see :meth:`interleaved`), or one whose last line ends in a
        key without its value (`computeType=`)."""
        return self.interleaved(lines) or lines[-1].endswith("=")

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """A record cut short: its prefix (function, level, thread, time stamp) and the pairs that are whole
        (a pair at depth 0 followed by a space; a group once closed, as its bracketed text)."""
        match = _PREFIX.match(text)
        if match is None:
            return super().truncated(text, path, line, end_line)
        level = match.group("level")
        return Event(
            self.library,
            match.group("function"),
            "truncated",
            text=text,
            fields=_whole_pairs(text[match.end() :]),
            file=path,
            line=line,
            end_line=end_line,
            thread=match.group("thread"),
            timestamp=match.group("time"),
            level=level,
            log_format=self.name,
        )

    def clean(self, lines: list[str]) -> str:
        parts: list[str] = []
        for text in lines:
            if text.endswith("\\"):
                text = text[:-1]
            stripped = text.lstrip()
            if parts and stripped.startswith("#"):
                stripped = stripped.lstrip("#").lstrip()
                text = stripped
            parts.append(text)
        return " ".join(parts) if len(parts) > 1 else parts[0]

    def build(self, generic: Any) -> tuple[type, dict[str, Any], tuple[str, ...]]:
        timestamp, _library, thread, level, function, items = generic
        warnings: list[str] = []
        pairs = _dedupe(items, warnings, "")
        if _is_matmul(level, function, pairs):
            words = _words(items)  # a word without `=`, in a group too: a cut key (`t ype=R_32F`), an edit
            if words:
                raise RecordError(f"unexpected text {' '.join(map(str, words))[:60]!r} in a matmul line (cut short?)")
            if "computeDesc" not in pairs:
                raise RecordError("the matmul line has no computeDesc (cut short?)")
            kwargs = self.gemm(pairs, warnings)
            kwargs.update(
                library=self.library,
                function=function,
                thread=thread,
                timestamp=timestamp,
                level=level,
                log_format=self.name,
            )
            return GemmCall, kwargs, tuple(warnings)
        words = [value for key, value in items if key == ""]
        text = _render(items) if words else ""
        if level.lower() not in KNOWN_LEVELS:
            warnings.append(f"level {level!r} is not one the library is known to print; kept as an event")
        return (
            Event,
            {
                "library": self.library,
                "function": function,
                "event": LEVEL_EVENTS.get(level.lower(), level.lower()),
                "text": text,
                "fields": _flatten(tuple(p for p in items if p[0] != "")),
                "thread": thread,
                "timestamp": timestamp,
                "level": level,
                "log_format": self.name,
            },
            tuple(warnings),
        )

    fallback_rule = "text_line"

    def fallback(self, tree: Any, path: str, line: int, end_line: int) -> Event | None:
        """A free-text level (Error, Info, Hint ...) whose message is not pairs: an Event with the text as is."""
        parts = {token.type.split("__")[-1]: str(token) for token in tree.children}
        level = parts.get("LEVEL", "")
        if level.lower() in ("trace", "api"):
            return None  # those must be pairs; a failure there is an error
        return Event(
            self.library,
            parts.get("FUNCTION", "?"),
            LEVEL_EVENTS.get(level.lower(), level.lower()),
            text=parts.get("TEXT", ""),
            file=path,
            line=line,
            end_line=end_line,
            thread=parts.get("THREAD", parts.get("PROCESS")),
            timestamp=parts.get("TIMESTAMP"),
            level=level,
            log_format=self.name,
        )

    def partial(self, text: str, path: str, line: int, end_line: int) -> GemmCall | None:
        """A matmul line a person edited (`B=... Bdesc=[...]`, a bare `...` for pairs left out): the GEMM of the
        pairs it shows, naming the matmul keys it does not."""
        elided = [match.group(1) for match in _ELIDED_PAIR.finditer(text)]
        shown = _BARE_ELISION.sub(" ", _ELIDED_PAIR.sub(" ", text))
        if shown == text:
            return None
        try:
            record, _warnings = LogFormat.parse(self, shown, path, line, end_line)
        except (_lark.LarkError, RecordError):
            return None
        if not isinstance(record, GemmCall):
            return None
        keys = set(_PAIR_KEY.findall(shown))
        missing = [key for key in _LOGGED_MATMUL if key not in keys and key not in elided] + elided
        return replace(record, missing=", ".join(dict.fromkeys(missing))) if missing else record

    def gemm(self, pairs: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
        """Keyword arguments of a GemmCall from a matmul line's pairs."""
        return matmul_fields(pairs, warnings)


_PAIR_START = re.compile(r"\s*([^\s=\[\]|]+)=")


def _whole_pairs(message: str) -> tuple[tuple[str, str], ...]:
    """The key=value pairs of a cut message that are whole: a scalar followed by a space, a group once its
    `]` came. The value after the last space may be cut, so it is left out."""
    out: list[tuple[str, str]] = []
    at = 0
    while True:
        match = _PAIR_START.match(message, at)
        if match is None:
            return tuple(out)
        key, at = match.group(1), match.end()
        if message.startswith("[", at):
            depth, end = 0, at
            while end < len(message):
                depth += {"[": 1, "]": -1}.get(message[end], 0)
                end += 1
                if depth == 0:
                    break
            if depth:
                return tuple(out)  # the group is not closed
            out.append((key, message[at:end]))
            at = end
            continue
        space = re.compile(r"\s").search(message, at)
        if space is None:
            return tuple(out)  # the value runs to the cut
        out.append((key, message[at : space.start()]))
        at = space.start()


def _is_matmul(level: str, function: str, pairs: dict[str, Any]) -> bool:
    return (
        level.lower() == "trace"
        and "Adesc" in pairs
        and isinstance(pairs["Adesc"], dict)
        and function.lower().endswith("matmul")
    )


def _words(items: Pairs, top: bool = True) -> list[Any]:
    """The words without a key of `items`, and those of its groups but a person's elision (`...`)."""
    out: list[Any] = []
    for key, value in items:
        if isinstance(value, tuple):
            out += _words(value, top=False)
        elif key == "" and (top or str(value).strip() not in _ELISIONS):
            out.append(value)
    return out


_ELISIONS = frozenset({"...", "…", "[...]", "[…]"})


def _dedupe(items: Pairs, warnings: list[str], where: str) -> dict[str, Any]:
    """Pairs to a dict (groups too); a repeated key keeps its first value and is reported."""
    out: dict[str, Any] = {}
    dup: dict[str, Any] = {}
    for key, value in items:
        if key == "":
            continue
        if isinstance(value, tuple):
            value = _dedupe(value, warnings, f"{where}{key}.")
        if key in out:
            if key not in dup:
                warnings.append(f"key {where}{key} is printed more than once; the first value is used")
            dup[key] = value
            out.setdefault(f"{key}#2", value)
            continue
        out[key] = value
    return out


def _flatten(items: Pairs, prefix: str = "") -> tuple[tuple[str, Any], ...]:
    out: list[tuple[str, Any]] = []
    for key, value in items:
        name = f"{prefix}{key}" if key else f"{prefix[:-1]}"
        if isinstance(value, tuple):
            out.extend(_flatten(value, f"{name}."))
        else:
            out.append((name, value))
    return tuple(out)


def _render(items: Pairs) -> Any:
    """The message as text again (a Text while its template is made: the values are put in later)."""
    parts: list[Any] = []
    for key, value in items:
        if parts:
            parts.append(" ")
        if key:
            parts.append(f"{key}=")
        parts.extend(("[", _render(value), "]") if isinstance(value, tuple) else (value,))
    return concat(parts)


_DESC_KEYS = {"type", "rows", "cols", "ld", "order", "batchCount", "stridedBatchOffset", "batch_count", "batch_stride"}
_COMPUTE_KEYS = {
    "computeType",
    "scaleType",
    "transa",
    "transb",
    "transA",
    "transB",
    "epilogue",
    "biasPointer",
    "smCountTarget",
    "aScalePointer",
    "bScalePointer",
    "cScalePointer",
    "dScalePointer",
}
_ALGO_KEYS = {
    "algoId": ("algo_id", True),
    "tile": ("tile", False),
    "stages": ("stages", False),
    "numSplitsK": ("num_splits_k", True),
    "reductionScheme": ("reduction_scheme", False),
    "ctaSwizzling": ("cta_swizzling", True),
    "customOption": ("custom_option", True),
    "innerShape": ("inner_shape", False),
    "clusterShape": ("cluster_shape", False),
    "schedulingMode": ("scheduling_mode", True),
}
_TOP_KEYS = {
    "A",
    "B",
    "C",
    "D",
    "Adesc",
    "Bdesc",
    "Cdesc",
    "Ddesc",
    "computeDesc",
    "algo",
    "workSpaceSizeInBytes",
    "beta",
    "alpha",
    "outOfPlace",
    "stream",
}


def _null(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value.lower() in ("0x0", "0", "(nil)", ""))


def _desc(pairs: dict[str, Any], name: str) -> dict[str, Any]:
    value = pairs.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(f"{name} should be a [...] group, got {value!r}")
    return value


def _check_scalars(pairs: dict[str, Any], groups: tuple[tuple[str, dict[str, Any], set[str]], ...]) -> None:
    """RecordError when a key the library writes as a value holds a group `[...]`."""
    top = ("", pairs, _TOP_KEYS - {"Adesc", "Bdesc", "Cdesc", "Ddesc", "computeDesc", "algo"})
    for group, values, known in (top, *((f"{name}.", values, known) for name, values, known in groups)):
        for key in known & values.keys():
            if isinstance(values[key], dict):
                raise RecordError(f"{group}{key} is a group `[...]` where the library writes a value")


def _shape(layouts: tuple[dict[str, Any], ...], compute: dict[str, Any]) -> dict[str, Any]:
    """m, n, k and the transposes, from the layouts (A, B, C, D) and the compute descriptor."""
    a, b, _, d = layouts
    if not a:
        raise RecordError("the matmul line has no Adesc")
    transa = transpose(compute.get("transa", compute.get("transA")), "computeDesc.transa")
    transb = transpose(compute.get("transb", compute.get("transB")), "computeDesc.transb")
    a_rows, a_cols = to_int(a.get("rows"), "Adesc.rows"), to_int(a.get("cols"), "Adesc.cols")
    m, k = (a_rows, a_cols) if transa == "N" else (a_cols, a_rows)
    if d:
        n = to_int(d.get("cols"), "Ddesc.cols")
    elif b:
        n = to_int(b.get("cols" if transb == "N" else "rows"), "Bdesc.cols")
    else:
        raise RecordError("the matmul line has neither Ddesc nor Bdesc")
    return {"m": m, "n": n, "k": k, "transa": transa, "transb": transb}


def _layout_fields(out: dict[str, Any], layouts: tuple[dict[str, Any], ...]) -> None:
    """Each layout's type, leading dimension and batch stride; the batch count; the row-major layouts."""
    batch, batched = 1, False
    for letter, desc in zip("abcd", layouts, strict=False):
        if not desc:
            continue
        out[f"{letter}_type"] = desc.get("type")
        if "ld" in desc:
            out[f"ld{letter}"] = to_int(desc["ld"], f"{letter.upper()}desc.ld")
        count = desc.get("batchCount", desc.get("batch_count"))
        if count is not None and not batched:  # the first layout with a batch count gives it (they agree)
            batch, batched = to_int(count, f"{letter.upper()}desc.batchCount"), True
        stride = desc.get("stridedBatchOffset", desc.get("batch_stride"))
        if stride is not None:
            out[f"stride_{letter}"] = to_int(stride, f"{letter.upper()}desc.stridedBatchOffset", low=None)
    out["batch_count"] = batch
    orders = [
        f"{x}={desc['order']}"
        for x, desc in zip("ABCD", layouts, strict=False)
        if desc.get("order") not in (None, "col", "ORDER_COL")
    ]
    out["order"] = " ".join(orders) or None


def _compute_fields(out: dict[str, Any], compute: dict[str, Any]) -> None:
    """The compute descriptor's fields."""
    out["compute_type"] = compute.get("computeType")
    out["scale_type"] = compute.get("scaleType")
    epilogue = compute.get("epilogue")
    out["epilogue"] = None if epilogue in (None, "EPILOGUE_DEFAULT") else epilogue
    out["bias_pointer"] = not _null(compute.get("biasPointer"))
    out["scale_pointers"] = any(not _null(compute.get(f"{x}ScalePointer")) for x in "abcd")
    if "smCountTarget" in compute:
        out["sm_count_target"] = to_int(compute["smCountTarget"], "computeDesc.smCountTarget")


def _algo_and_call_fields(out: dict[str, Any], algo: dict[str, Any], pairs: dict[str, Any]) -> None:
    """The algorithm's fields, then the call's own (workspace, scalars, stream, pointers)."""
    for key, (name, numeric) in _ALGO_KEYS.items():
        if key in algo:
            out[name] = to_int(algo[key], f"algo.{key}", low=None) if numeric else algo[key]
    if "workSpaceSizeInBytes" in pairs:
        out["workspace_size"] = to_int(pairs["workSpaceSizeInBytes"], "workSpaceSizeInBytes")
    if "outOfPlace" in pairs:  # when not printed (hipBLASLt) compare c_ptr and d_ptr
        out["out_of_place"] = pairs["outOfPlace"] not in ("0", "false")
    for key in ("alpha", "beta"):
        if key in pairs:
            out[key] = pairs[key]
    out["stream"] = pairs.get("stream")
    for letter in "ABCD":
        out[f"{letter.lower()}_ptr"] = pairs.get(letter)


_SCALE_POINTERS = ("biasPointer", "aScalePointer", "bScalePointer", "cScalePointer", "dScalePointer")
"""The compute descriptor's pointers, kept among a record's pointers besides the fields they give."""


def _unmodelled(
    pairs: dict[str, Any], groups: tuple[tuple[str, dict[str, Any], set[str]], ...]
) -> tuple[list[tuple[str, Any]], list[tuple[str, Any]]]:
    """(extra, pointers): every key no field models, flat (`group.key`), pointers apart."""
    extra: list[tuple[str, Any]] = []
    pointers: list[tuple[str, Any]] = []

    def keep(items: list[tuple[str, Any]]) -> None:
        for name, one in items:
            (pointers if _pointer_like(one) else extra).append((name, one))

    for group, values, known in groups:
        for key, value in values.items():
            if key not in known:  # a group nested in a group (a key a later version adds) is kept flat too
                keep(_flat(f"{group}.{key}", value))
        if group == "computeDesc":
            pointers.extend((f"computeDesc.{key}", values[key]) for key in _SCALE_POINTERS if key in values)
    for key, value in pairs.items():
        if key not in _TOP_KEYS:
            keep(_flat(key, value))
    return extra, pointers


def _flat(name: str, value: Any) -> list[tuple[str, Any]]:
    """[(name, value)], or for a group its pairs, flat (`name.key`)."""
    return _flatten_dict(value, f"{name}.") if isinstance(value, dict) else [(name, value)]


def matmul_fields(pairs: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    """GemmCall keyword arguments from the pairs of a cuBLASLt or hipBLASLt matmul trace line."""
    layouts = tuple(_desc(pairs, f"{x}desc") for x in "ABCD")
    compute = _desc(pairs, "computeDesc")
    algo = _desc(pairs, "algo")
    groups = (
        *((f"{x}desc", desc, _DESC_KEYS) for x, desc in zip("ABCD", layouts, strict=True)),
        ("computeDesc", compute, _COMPUTE_KEYS),
        ("algo", algo, set(_ALGO_KEYS)),
    )
    _check_scalars(pairs, groups)
    out = _shape(layouts, compute)
    _layout_fields(out, layouts)
    _compute_fields(out, compute)
    _algo_and_call_fields(out, algo, pairs)
    extra, pointers = _unmodelled(pairs, groups)
    out["extra"] = tuple(extra)
    out["pointers"] = tuple(pointers)
    return out


def _flatten_dict(values: dict[str, Any], prefix: str) -> list[tuple[str, Any]]:
    out = []
    for key, value in values.items():
        if isinstance(value, dict):
            out.extend(_flatten_dict(value, f"{prefix}{key}."))
        else:
            out.append((f"{prefix}{key}", value))
    return out


def _pointer_like(value: Any) -> bool:
    if isinstance(value, Slot):
        return value.kind == "ptr"
    return isinstance(value, str) and _POINTER.fullmatch(value) is not None
