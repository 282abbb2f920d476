"""Pieces shared by the AMD dialects: bench command lines, profile flow mappings, and the GEMM fields both
libraries name alike (rocBLAS and hipBLASLt bench options and profile keys share their names)."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from blaslog.formats._base import LeafTransformer, LogFormat, RecordCut, RecordError, to_int, transpose
from blaslog.records import Event, GemmCall

AFTER_TAG = (
    r"(?:^|(?<=\]:)|(?<=\]: )|(?<=>:)|(?<=>: )|(?<=^\d: )|(?<=\d\d: )"
    r"|(?<=\dZ )|(?<= std(?:out|err) [FP] )|(?<=\s\| ))"
)
UNIQ_COUNT = r"(?:[ \t]*\d+[ \t]+)?"
"""The count `sort | uniq -c` puts before a line (`     12 `), which a bench line may begin with: the grammar reads
it as the number of calls the line stands for."""
"""Where an AMD record may begin on a line (start regexes begin with it): at the line's start, or after a
launcher's tag that the launcher put before every line of the process (``[rank0]: `` from torchrun,
``[default0]:`` from torch elastic, ``[1,0]<stdout>:`` from ``mpirun --tag-output``, ``12: `` from
``srun --label``), or after what a CI runner or a log collector puts there (GitHub Actions' raw logs
``2024-01-15T10:23:45.1234567Z ``, Kubernetes' CRI logs ``... stdout F ``, docker compose's ``trainer-1  | ``).
The parser keeps the tag apart and takes it off the record's later lines."""

SWITCHES = frozenset(
    {
        "bias_vector",
        "grouped_gemm",
        "any_stride",
        "flush",
        "use_e",
        "gradient",
        "scaleAlpha_vector",
        "swizzleA",
        "swizzleB",
        "print_kernel_info",
        "atomics_allowed",
        "atomics_not_allowed",
        "verify",
        "v",
        # hipblaslt-bench's other bool switches (clients/bench/src/client.cpp), and the two TensileLite's bench
        # logger prints bare
        "amaxD",
        "amaxScaleA",
        "amaxScaleB",
        "c_equal_d",
        "log_function_name",
        "scaleC",
        "scaleD",
    }
)
"""Bench options that take no value: any other option without one at the end of a line was cut off."""

MODELLED = frozenset(
    {
        "lda",
        "ldb",
        "ldc",
        "ldd",
        "stride_a",
        "stride_b",
        "stride_c",
        "stride_d",
        "batch_count",
        "transA",
        "transB",
        "alpha",
        "beta",
        "a_type",
        "b_type",
        "c_type",
        "d_type",
        "compute_type",
        "solution_index",
        "call_count",
    }
)
"""The names :func:`gemm_fields` reads (besides m, n and k): a dialect keeps the others as `extra`."""


class CommandTransformer(LeafTransformer):
    """bench.lark / flowmap.lark trees -> (program, [(option, value)]) or [(key, value)]."""

    def bench(self, children: list[Any]) -> Any:
        """A command, with the number of calls a leading count (`uniq -c`) says it stands for as `call_count`."""
        if len(children) == 1:
            return children[0]
        count, (program, options) = children
        return (program, [("call_count", count), *options])

    def profile(self, children: list[Any]) -> Any:
        return children[0]

    def command(self, children: list[Any]) -> tuple[Any, list[tuple[str, Any]]]:
        comment = children.pop() if type(children[-1]) is list else []
        return (children[0], children[1:] + comment)

    def bench__command(self, children: list[Any]) -> tuple[Any, list[tuple[str, Any]]]:
        return self.command(children)

    def bench__comment(self, children: list[Any]) -> list[tuple[str, Any]]:
        """A `# key=value ...` comment after the command (the kernel-selection log): its pairs, and its loose
        words as one `comment` value."""
        pairs = [child for child in children if type(child) is tuple]
        words = [child for child in children if type(child) is not tuple]
        return pairs + ([("comment", " ".join(words))] if words else [])

    def bench__comment_pair(self, children: list[Any]) -> tuple[str, Any]:
        return (children[0], children[1])

    def bench__option(self, children: list[Any]) -> tuple[str, Any]:
        return (children[0], children[1] if len(children) > 1 else None)

    def mapping(self, children: list[Any]) -> list[tuple[str, Any]]:
        return children

    def flat(self, children: list[Any]) -> list[tuple[str, Any]]:
        return children

    def flowmap__entry(self, children: list[Any]) -> tuple[str, Any]:
        key, value = children
        if isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        return (key, value)


class BenchFormat(LogFormat):
    """What the rocblas-bench and hipblaslt-bench dialects share: a command a person continued over lines (a
    trailing ` \\`, as documentation prints them, or wrapped by hand with every later line made of options
    only), two commands glued on one line, and a command cut short."""

    program: str
    """The program's name (`rocblas-bench`)."""

    def continues(self, lines: list[str], line: str) -> bool:
        if lines[-1].rstrip().endswith("\\") and line[:1] in (" ", "\t", "-", "#"):
            return True  # continuation lines are indented (or options, or the kernel-selection comment)
        return _options_only(line)

    def interleaved(self, lines: list[str]) -> bool:
        """A line that ends with ` \\` is continued by a later line, whatever other text comes between."""
        return lines[-1].rstrip().endswith("\\")

    def needed(self, values: dict[str, Any]) -> list[str]:
        """The options the logger always writes in a command of these options (`values`, keyed without dashes):
        one name, or alternatives joined with `|`."""
        return []

    def unfinished(self, lines: list[str]) -> bool:
        """A command that lacks an option its logger always writes, or has an option without its value (the
        last one cut, or two words glued where a space was lost: `--ldb768 --beta 0`), or ends in dashes."""
        text = self.clean(lines)
        if text.endswith("-"):
            return True
        options = [(name, unbold(value) or None) for name, value in salvage_options(text)]
        if any(value is None and name not in SWITCHES for name, value in options[:-1]):
            return True
        try:
            check_complete(self.program, options, self.needed(dict(options)))
        except RecordCut:
            return True
        return False

    def clean(self, lines: list[str]) -> str:
        if len(lines) == 1:
            return lines[0]
        return " ".join(text.rstrip().removesuffix("\\").strip() for text in lines)

    def glued(self, text: str) -> int:
        match = _glue(self.program).search(text, text.find(self.program) + len(self.program))
        return match.end() if match else 0

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """What a cut command says: its options as fields."""
        options = salvage_options(text)
        return Event(
            self.library,
            self.function_of(dict(options)),
            "truncated",
            text=text,
            fields=tuple(options),
            file=path,
            line=line,
            end_line=end_line,
            log_format=self.name,
        )

    def function_of(self, values: dict[str, Any]) -> str:
        """The function a (possibly cut) command's options name."""
        return self.program

    def logged(self, values: dict[str, Any]) -> list[str]:
        """The options the logger writes in a GEMM's command (of these `values`), in its order: a partial record
        names those it does not show."""
        return []

    def generic(self, values: dict[str, Any]) -> dict[str, Any]:
        """A command's values under the names both AMD libraries share (`transA`, `a_type` ...)."""
        return values

    def partial(self, text: str, path: str, line: int, end_line: int) -> GemmCall | None:
        """A command edited inside the line (`-k 1024 ... --a_type f16_r`, `--lda ...`, a note after the last
        value): the GEMM of the options it shows."""
        values: dict[str, Any] = {}
        elided = []
        text = self.clean([text])
        for name, value in salvage_options(text):
            if value in ELIDED and value:
                elided.append(name)  # `--lda ...`: a value a person left out
            values.setdefault(name, None if value in ELIDED else value)
        logged = self.logged(values)
        if not logged:
            return None  # not a GEMM's command (or no -f): nothing to recover
        unseen = [name for name in logged if values.get(name) is None]
        unseen += [name for name in elided if name not in unseen]
        bare = sum(word in ELIDED for word in text.split()) > len(elided)  # `-k 1024 ... --a_type`: options left out
        if not unseen and not bare:  # every field shown, a note after them (`<-- slow`): the whole call
            options = [(name, value) for name, value in values.items() if name not in elided]
            whole = _whole(self, (self.program, options), path, line, end_line)
            if whole is not None:
                return whole
        return partial_call(self, self.function_of(values), self.generic(values), unseen, path, line, end_line)


@functools.cache
def _glue(program: str) -> re.Pattern[str]:
    """Finds a second command of `program` inside a line (after a space, before one: not in a path or a word)."""
    return re.compile(rf"\s(?=(?:\S*/)?{re.escape(program)}\s)")


def _options_only(line: str) -> bool:
    """Whether a line holds nothing but bench options (`--name value` pairs and switches): the later lines of
    a command wrapped by hand without ` \\`."""
    words = line.split()
    if not words or not _OPTION.match(words[0]):
        return False  # a rule of dashes, a result row: no option first
    valued = False
    for word in words:
        if _OPTION.match(word):
            valued = False
        elif valued:
            return False  # a second word after an option: prose, a result row, not options
        else:
            valued = True
    return True


_OPTION = re.compile(r"--?[A-Za-z][\w-]*\Z")


def salvage_options(text: str) -> list[tuple[str, str]]:
    """The `--name value` pairs of a bench command however it ends (a cut one the grammar may reject)."""
    out: list[tuple[str, str]] = []
    for word in text.split("#", 1)[0].split()[1:]:
        if _OPTION.match(word):
            out.append((word.lstrip("-"), ""))
        elif out and out[-1][1] == "":
            out[-1] = (out[-1][0], word)
    return out


ELIDED = frozenset({"", "...", "…", "[...]", "[…]", '"..."', "'...'"})
"""What a person writes for a value left out (and an option without its value)."""

_PARTIAL_KEYS = (
    ("m", "m"),
    ("n", "n"),
    ("k", "k"),
    ("transa", "transA"),
    ("transb", "transB"),
    ("a_type", "a_type"),
    ("b_type", "b_type"),
    ("c_type", "c_type"),
    ("d_type", "d_type"),
    ("compute_type", "compute_type"),
)
"""(GemmCall field, shared name) of the key fields a partial record recovers where visible."""


def _number(value: Any, what: str) -> int | None:
    """A visible integer value of an edited record, None when there is none or it is no integer."""
    if value is None:
        return None
    try:
        return int(to_int(value, what, low=None))
    except RecordError:
        return None


def partial_call(
    fmt: LogFormat, function: str, values: dict[str, Any], unseen: list[str], path: str, line: int, end_line: int
) -> GemmCall | None:
    """The partial GemmCall of an edited record's visible `values` (under the shared names; None for a value
    left out), `unseen` naming the other fields its writer logs that it does not show; None when none of m, n
    and k is visible."""
    out: dict[str, Any] = {}
    missing = list(unseen)
    try:
        for field, name in _PARTIAL_KEYS:
            value = values.get(name)
            if field in ("m", "n", "k"):
                out[field] = None if value is None else to_int(value, name)
            elif field in ("transa", "transb"):
                out[field] = "?" if value is None else transpose(value, name)
            else:
                out[field] = value
            if value is None and name not in missing:
                missing.append(name)
    except RecordError:
        return None  # a value shown but wrong (`-m 1_0`): the record's own error says which
    if out["m"] is None and out["n"] is None and out["k"] is None:
        return None
    for field in ("batch_count", "lda", "ldb", "ldc", "ldd", "solution_index"):
        number = _number(values.get(field), field)
        if number is not None:
            out[field] = number
        elif values.get(field) is not None:
            return None
    if out.get("batch_count") is not None and out["batch_count"] < 1:
        del out["batch_count"]
    if values.get("call_count") is not None:
        count = _number(values["call_count"], "call_count")
        if count is None or count < 1:
            return None  # a count shown but wrong: the record's own error says so
        out["call_count"] = count
    for field in ("algo", "flags"):
        value = values.get(field)
        number = value if type(value) is int else _number(value, field)
        if number is not None:
            out[field] = number
        elif value is not None:
            return None
    return GemmCall(
        fmt.library,
        function,
        **out,
        missing=", ".join(missing) or "fields hidden by `...`",
        file=path,
        line=line,
        end_line=end_line,
        log_format=fmt.name,
    )


def _whole(fmt: LogFormat, generic: Any, path: str, line: int, end_line: int) -> GemmCall | None:
    """The record the dialect builds from an edited record's visible values (`generic`, as its transformer gives
    them), where they are every value its writer logs; None when the build rejects them."""
    try:
        cls, kwargs, _warnings = fmt.build(generic)
    except RecordError:
        return None
    return cls(file=path, line=line, end_line=end_line, **kwargs) if cls is GemmCall else None


class ProfileFormat(LogFormat):
    """What the rocBLAS and hipBLASLt profile dialects share: an entry is one `{ ... }` on one line (after `- `, or
    without it in rocBLAS's first form), so one without its closing brace was cut short (the process died while
    the profile was written at exit)."""

    function_key: str
    """The key that names the function (`rocblas_function`)."""

    def cut_short(self, text: str) -> bool:
        return text.lstrip().startswith(("-", "{")) and not text.rstrip().endswith("}")

    def unfinished(self, lines: list[str]) -> bool:
        return self.cut_short(" ".join(lines))

    def gemm_function(self, function: str) -> bool:
        """Whether an entry of this function is a GEMM's."""
        return True

    def partial(self, text: str, path: str, line: int, end_line: int) -> GemmCall | None:
        """An entry edited inside the line (`..., call_count: 12`, `lda: ...`): the GEMM of its whole pairs."""
        values: dict[str, Any] = {}
        for key, value in _PAIR.findall(text):
            value = value.strip()
            values.setdefault(key, None if value in ELIDED else value.strip("'\""))
        function = values.get(self.function_key)
        if not function or not self.gemm_function(function) or not any(key in values for key in ("M", "N", "K")):
            return None
        shared = {{"M": "m", "N": "n", "K": "k"}.get(key, key): value for key, value in values.items()}
        unseen = [key for key in self.logged(function) if values.get(key) is None]
        if not unseen and not re.search(r"[{,]\s*(?:\.\.\.|…)\s*[,}]", text):  # every key shown, a note: whole
            whole = _whole(self, [(k, v) for k, v in values.items() if v is not None], path, line, end_line)
            if whole is not None:
                return whole
        return partial_call(self, function, shared, unseen, path, line, end_line)

    def logged(self, function: str) -> list[str]:
        """The keys the profile writes in an entry of this GEMM function, in its order."""
        return ["M", "N", "K", "transA", "transB"]

    def truncated(self, text: str, path: str, line: int, end_line: int) -> Event:
        """What a cut entry says: its whole `key: value` pairs as fields."""
        pairs = [(key, value.strip().strip("'\"")) for key, value in _PAIR.findall(text)]
        function = dict(pairs).get(self.function_key) or "?"
        return Event(
            self.library,
            function,
            "truncated",
            text=text,
            fields=tuple(pairs),
            file=path,
            line=line,
            end_line=end_line,
            log_format=self.name,
        )


_PAIR = re.compile(r"([A-Za-z_]\w*)\s*:\s*(\"[^\"]*\"|'[^']*'|[^,{}\s][^,{}]*?)\s*(?=[,}])")
"""A whole `key: value` pair of a profile entry (one followed by `,` or `}`: the last, cut one is left out)."""


def check_complete(program: str, options: list[tuple[str, Any]], needed: Iterable[str]) -> None:
    """Raise RecordCut when a bench command lacks options its logger always writes (`needed`: one name, or
    alternatives joined with `|`), or ends in an option whose value is missing: it was cut short."""
    names = {name.lstrip("-") for name, _ in options}
    missing = [need.split("|")[0] for need in needed if not names & set(need.split("|"))]
    if missing:
        raise RecordCut(f"the {program} command has no {', '.join('--' + m for m in missing)} (cut short?)")
    if options:
        name, value = options[-1]
        if value is None and name.lstrip("-") not in SWITCHES:
            raise RecordCut(f"the {program} command ends in {name} without its value (cut short?)")
        if broken(name.lstrip("-"), value):
            raise RecordCut(f"the {program} command ends in {name} {value}, the start of a type name (cut short?)")


_TYPE_WORDS = [
    "f16_r",
    "f32_r",
    "f64_r",
    "bf16_r",
    "f16_c",
    "f32_c",
    "f64_c",
    "bf16_c",
    "i8_r",
    "u8_r",
    "i32_r",
    "u32_r",
    "i8_c",
    "u8_c",
    "i32_c",
    "u32_c",
    "i_r32",
    "f8_r",
    "bf8_r",
    "f8_fnuz_r",
    "bf8_fnuz_r",
    "f6_r",
    "bf6_r",
    "f4_r",
    "xf32_r",
    "f32_bf16_r",
    "f32_f16_r",
    "c_f32_r",
    "c_xf32_r",
    "c_f64_r",
    "c_i32_r",
    "c_f32_fast_bf16_r",
    "c_f32_fast_f16_r",
    "c64_r",
    "c16_r",
    "c16bf_r",
]
"""The data and compute type names the benches log and take (AMD-FORMATS.md 1.3, 2.3, 2.4); rocBLAS's composite
compute types (`f32`, `f8_f8_f32`) go with `--composite_compute_type`, whose value is not checked."""
TYPE_WORDS = frozenset(_TYPE_WORDS)
"""The data and compute type names the benches take, as a set."""
_TYPE_SHORT = frozenset("hsdczb")
"""The one-letter precisions rocblas-bench takes (`--a_type h --compute_type s`), as people type them."""
_TYPED_OPTIONS = frozenset(
    {"a_type", "b_type", "c_type", "d_type", "compute_type", "scale_type", "bias_type", "aux_type"}
)


def broken(name: str, value: Any) -> bool:
    """Whether the value of the last option of a command is visibly cut: a type option whose value is the start of
    a type name and no name itself (`f` or `f3` of `f32_r`); any other value may be whole."""
    if value is None or name not in _TYPED_OPTIONS:
        return False
    text = str(value)
    if text in _TYPE_SHORT or text in _TYPE_WORDS:
        return False
    return any(word.startswith(text) for word in _TYPE_WORDS)


def unbold(value: Any) -> Any:
    """An option's value without a person's Markdown bold around it (`**gemm_ex**`)."""
    if isinstance(value, str) and len(value) > 4 and value.startswith("**") and value.endswith("**"):
        return value[2:-2]
    return value


def option_dict(options: list[tuple[str, Any]], warnings: list[str]) -> dict[str, Any]:
    """Options as a dict keyed without dashes; a repeated option keeps its first value and is reported; a value
    in a person's Markdown bold (`-f **gemm_ex**`, as commands are pasted into issues) read without the bold; an
    option that takes a value but has none (`--ldc --d_type f32_r`) is reported; `--batch` (rocblas-bench's
    name before ROCm 2) read as `--batch_count`, as both benches' clients read it (their fix_batch)."""
    out: dict[str, Any] = {}
    for name, value in options:
        key = name.lstrip("-")
        value = unbold(value)
        if value is None and key not in SWITCHES and key not in out:
            warnings.append(f"option {name} has no value")
        if key in out:
            if out[key] != value:
                warnings.append(
                    f"option {name} is given more than once ({out[key]!r}, then {value!r}); the first is used"
                )
            continue
        out[key] = value
    if "batch" in out and "batch_count" not in out:  # the clients' own fix_batch: `--batch` is `--batch_count`
        out["batch_count"] = out.pop("batch")
    return out


def gemm_fields(values: dict[str, Any], dims: Iterable[str] = ("m", "n", "k")) -> dict[str, Any]:
    """GemmCall keyword arguments from the values both AMD libraries name alike (`dims`: the names of m, n
    and k); each dialect adds its own (see MODELLED)."""
    out: dict[str, Any] = {}
    for key, name in zip(dims, "mnk", strict=False):
        if key not in values:
            raise RecordError(f"the GEMM has no {key} (m, n, k are needed)")
        out[name] = to_int(values[key], key)
    for name in ("lda", "ldb", "ldc", "ldd"):
        if values.get(name) is not None:
            out[name] = to_int(values[name], name)
    for letter in "abcd":
        key = f"stride_{letter}"
        if values.get(key) is not None:
            out[key] = to_int(values[key], key, low=None)
        out[f"{letter}_type"] = values.get(f"{letter}_type")
    out["compute_type"] = values.get("compute_type")
    out["batch_count"] = to_int(values.get("batch_count", "1"), "batch_count")
    out["transa"] = transpose(values.get("transA", "N"), "transA")
    out["transb"] = transpose(values.get("transB", "N"), "transB")
    if values.get("solution_index") is not None:
        out["solution_index"] = to_int(values["solution_index"], "solution_index", low=None)
    if "call_count" in values:
        out["call_count"] = to_int(values["call_count"], "call_count", low=1)
    out["alpha"], out["beta"] = values.get("alpha"), values.get("beta")
    return out


def unmodelled(values: dict[str, Any], known: frozenset[str]) -> tuple[tuple[str, Any], ...]:
    """The values not in `known`, for `extra` (an option given without a value as "")."""
    return tuple((k, v if v is not None else "") for k, v in values.items() if k not in known)


def call_event(
    fmt: LogFormat, function: str, values: dict[str, Any], warnings: list[str]
) -> tuple[type, dict[str, Any], tuple[str, ...]]:
    """A profile entry of a function that is not a GEMM: an Event that keeps every key (``build``'s result)."""
    return (
        Event,
        {
            "library": fmt.library,
            "function": function,
            "event": "call",
            "fields": tuple(values.items()),
            "log_format": fmt.name,
        },
        tuple(warnings),
    )
