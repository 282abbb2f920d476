"""One defined figure: how far two sides' arithmetic moves sampled outputs of one GEMM apart.

Inputs are drawn i.i.d. from N(0, 1) with a fixed seed and multiplied by ``scale`` (or sampled from the user's
own A and B), rounded to each side's input format. ``samples`` output elements are computed, each with its full
k, by each side's arithmetic. The metric is |Δ| / Σ_k |a_ik·b_kj|: the error relative to the size of the
products. ``difference`` compares the two sides; ``sides`` compares each side with an FP64 reference.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from blaslog.emulate.arithmetic import Arithmetic
from blaslog.emulate.engine import Operands, operands, reference, require, side_output
from blaslog.emulate.gpus import Gpu
from blaslog.errors import BlaslogError

METRIC = "|Δ| / Σ_k |a_ik·b_kj|"
DEFAULT_SAMPLES = 1024
MAX_SAMPLES = 1 << 16
MAX_K = 1 << 20
MAX_ELEMENTS = 1 << 25
"""samples x k above which an emulation is refused (its working set is some 60 bytes per element)."""


@dataclass(frozen=True, slots=True)
class Tolerance:
    """A test's tolerance: it passes where |x - y| <= atol + rtol * |y|."""

    atol: float
    """Absolute tolerance."""
    rtol: float
    """Relative tolerance."""

    @classmethod
    def parse(cls, text: str) -> Tolerance:
        """`atol=1e-5,rtol=1.3e-6` (either may be left out: 0)."""
        values: dict[str, float] = {}
        usage = f"--tolerance {text!r}: give atol=A,rtol=R (e.g. atol=1e-5,rtol=1.3e-6; either may be left out)"
        for part in text.replace(" ", "").split(","):
            name, sep, value = part.partition("=")
            if not sep or name not in ("atol", "rtol") or not value:
                raise BlaslogError(usage)
            if name in values:
                raise BlaslogError(f"--tolerance {text!r}: {name} is given twice")
            try:
                number = float(value)
            except ValueError:
                raise BlaslogError(f"--tolerance {text!r}: {value!r} is not a number") from None
            if not np.isfinite(number) or number < 0:
                raise BlaslogError(f"--tolerance {text!r}: {name} must be a finite number >= 0")
            values[name] = number
        atol, rtol = values.get("atol", 0.0), values.get("rtol", 0.0)
        if atol == 0 and rtol == 0:
            raise BlaslogError(f"--tolerance {text!r}: a tolerance of 0 asks for bit equality; give atol or rtol > 0")
        return cls(atol, rtol)

    def text(self) -> str:
        """`atol=1e-05, rtol=1.3e-06`."""
        return f"atol={self.atol:g}, rtol={self.rtol:g}"


@dataclass(frozen=True)
class Settings:
    """How to emulate (the same for every finding of a run)."""

    samples: int = DEFAULT_SAMPLES
    """Output elements sampled."""
    seed: int = 0
    """Seed of the input draws."""
    scale: float = 1.0
    """Inputs are N(0, 1) times this."""
    tolerance: Tolerance | None = None
    """The test's tolerance, for the verdict."""
    a: np.ndarray | None = field(default=None, compare=False)
    """The user's op(A), [m, k] (from --inputs A.npy,B.npy), instead of random draws."""
    b: np.ndarray | None = field(default=None, compare=False)
    """The user's op(B), [k, n]."""
    inputs_source: str = ""
    """Where a and b came from."""
    gpu: Gpu | None = None
    """--gpu: the GPU for both sides (else what the logs say)."""
    progress: bool = False
    """Show a progress line on stderr (a terminal)."""


@dataclass(frozen=True, slots=True)
class SideSpec:
    """One side of a comparison."""

    role: str
    """`sharded`, `unsharded`, `variant 1` ..."""
    arithmetics: tuple[Arithmetic, ...]
    """Its arithmetic, or the candidates when the numerics are not known."""
    tp: int = 1
    """Ranks its k range is split over (1: the full k on one GPU)."""

    @property
    def candidate(self) -> bool:
        """True when the arithmetic is not known (several candidates, or one labelled so)."""
        return any(a.candidate for a in self.arithmetics)


def _stats(values: np.ndarray) -> dict[str, float]:
    return {"max": float(np.max(values)), "median": float(np.median(values))}


@dataclass
class Prediction:
    """The emulation of one finding."""

    k: int
    """The full k of each sampled output."""
    samples: int
    """Output elements computed."""
    sides: tuple[SideSpec, SideSpec]
    """The two sides."""
    relative: dict[str, dict[str, float]]
    """Role -> max / median of each side against FP64 (its worst candidate)."""
    difference: dict[str, float]
    """Max / median of the metric between the sides (the worst pair of candidates)."""
    absolute: dict[str, float]
    """Max / median of |x - y| between the sides, in the units of inputs at `scale`."""
    combinations: list[dict[str, Any]]
    """Each pair of candidates with its difference (one entry when both sides are known)."""
    histogram: dict[str, list[float]]
    """Distribution of the worst pair's per-sample metric: `edges` (log10) and `counts`."""
    inputs: dict[str, Any]
    """How the inputs were made."""
    verdict: dict[str, Any] | None = None
    """With a tolerance: the share of sampled outputs that fail it, and a sentence."""

    def to_dict(self, gpu_source: str = "") -> dict[str, Any]:
        """The finding's `emulation` object."""
        first, second = self.sides
        gpus = {s.role: s.arithmetics[0].gpu for s in self.sides}
        gpu: Any = first.arithmetics[0].gpu.name
        if gpus[first.role] != gpus[second.role]:
            gpu = {role: g.name for role, g in gpus.items()}
        out: dict[str, Any] = {
            "gpu": gpu,
            "gpu_source": gpu_source,
            "instructions": {s.role: _instructions(s) for s in self.sides},
            "arithmetic": {s.role: [a.to_dict() for a in s.arithmetics] for s in self.sides},
            "tp": {s.role: s.tp for s in self.sides},
            "k": self.k,
            "inputs": self.inputs,
            "samples": self.samples,
            "metric": METRIC,
            "difference": self.difference,
            "absolute_difference": self.absolute,
            "sides": self.relative,
            "candidates": first.candidate or second.candidate,
            "combinations": self.combinations,
            "histogram": self.histogram,
        }
        if self.verdict is not None:
            out["verdict"] = self.verdict
        return out

    def sentence(self) -> str:
        """In words: `predicted: the unsharded TF32 path is off by up to 8e-4 of Σ|a·b| (median 1.4e-4); ...`."""
        first, second = self.sides
        parts = []
        for side in (second, first):
            stats = self.relative[side.role]
            what = " or ".join(a.label for a in side.arithmetics)
            tag = " (candidates)" if side.candidate else ""
            parts.append(
                f"the {side.role} side ({what}{tag}) is off by up to {stats['max']:.2g} of Σ|a·b| "
                f"(median {stats['median']:.2g})"
            )
        text = (
            f"Predicted by emulation ({self.samples} sampled outputs, k={self.k}, inputs "
            f"{self.inputs['description']}): " + "; ".join(parts) + f"; the two sides differ by up to "
            f"{self.difference['max']:.2g} of Σ|a·b| (median {self.difference['median']:.2g}), "
            f"{self.absolute['max']:.3g} in absolute terms."
        )
        if self.verdict is not None:
            text += " " + self.verdict["text"]
        return text


def _instructions(side: SideSpec) -> Any:
    names = [a.instruction + (f" (split-K {a.splits})" if a.splits > 1 else "") for a in side.arithmetics]
    return names[0] if len(names) == 1 and not side.candidate else names


def draw(
    settings: Settings, k: int, rng: np.random.Generator, wide: bool = True
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """FP64 rows of op(A) and columns of op(B) for each sample, and how they were made (drawn as FP64 numbers when
    `wide`, else as FP32 ones)."""
    samples = settings.samples
    if settings.a is not None and settings.b is not None:
        a, b = settings.a, settings.b
        if a.ndim != 2 or b.ndim != 2 or a.shape[1] != k or b.shape[0] != k:
            raise BlaslogError(
                f"--inputs: A is {a.shape} and B is {b.shape}; this GEMM needs A as [m, {k}] and B as [{k}, n] "
                "(op(A) and op(B) of the unsharded GEMM)"
            )
        rows = rng.integers(0, a.shape[0], samples)
        cols = rng.integers(0, b.shape[1], samples)
        ra = np.asarray(a[rows, :], dtype=np.float64)
        rb = np.asarray(b[:, cols].T, dtype=np.float64)
        if not (np.isfinite(ra).all() and np.isfinite(rb).all()):
            raise BlaslogError(f"--inputs {settings.inputs_source}: the arrays hold NaN or infinite values")
        return ra, rb, {"source": settings.inputs_source, "description": f"from {settings.inputs_source}"}
    # FP32 draws where no side reads FP64 inputs: every other input format rounds them further anyway
    kind = np.float64 if wide else np.float32
    ra = rng.standard_normal((samples, k), dtype=kind).astype(np.float64) * settings.scale
    rb = rng.standard_normal((samples, k), dtype=kind).astype(np.float64) * settings.scale
    scale = "" if settings.scale == 1.0 else f" x {settings.scale:g}"
    return (
        ra,
        rb,
        {
            "distribution": "normal",
            "mean": 0.0,
            "std": settings.scale,
            "seed": settings.seed,
            "description": f"N(0, 1){scale}, seed {settings.seed}",
        },
    )


def emulate(first: SideSpec, second: SideSpec, k: int, settings: Settings, label: str = "") -> Prediction:
    """Both sides' outputs for the same sampled inputs, compared with each other and with FP64.

    `second` is the reference side of the verdict (the unsharded run, the first variant)."""
    _check_size(k, settings)
    require()
    rng = np.random.default_rng(settings.seed)
    wide = any(a.inputs == "fp64" for side in (first, second) for a in side.arithmetics)
    base_a, base_b, inputs = draw(settings, k, rng, wide)
    denominator, per_side, errors = _side_outputs((first, second), base_a, base_b, settings, label)
    combinations, (rel, x, y) = _combinations(first.role, second.role, per_side, denominator)
    prediction = Prediction(
        k=k,
        samples=settings.samples,
        sides=(first, second),
        relative={role: _stats(values) for role, values in errors.items()},
        difference=_stats(rel),
        absolute=_stats(np.abs(x - y)),
        combinations=combinations,
        histogram=_histogram(rel),
        inputs=inputs,
    )
    if settings.tolerance is not None:
        prediction.verdict = verdict(x, y, settings.tolerance, settings, first.role, second.role)
    return prediction


def _check_size(k: int, settings: Settings) -> None:
    """BlaslogError unless k, the samples and the inputs they make are within the emulation's bounds."""
    if not 1 <= k <= MAX_K:
        raise BlaslogError(f"k={k}: the emulation takes 1 <= k <= {MAX_K}")
    if not 1 <= settings.samples <= MAX_SAMPLES:
        raise BlaslogError(f"--samples {settings.samples}: give 1 to {MAX_SAMPLES}")
    if settings.samples * k > MAX_ELEMENTS:
        raise BlaslogError(
            f"{settings.samples} samples of k={k} are {settings.samples * k:,} input elements per matrix, more than "
            f"the {MAX_ELEMENTS:,} the emulation holds in memory (about 2 GB): give --samples "
            f"{max(1, MAX_ELEMENTS // k)} or fewer"
        )


Outputs = dict[str, list[tuple[Arithmetic, np.ndarray]]]
"""Each side's outputs (by role), one per arithmetic of the side."""


def _side_outputs(
    sides: tuple[SideSpec, SideSpec], base_a: np.ndarray, base_b: np.ndarray, settings: Settings, label: str
) -> tuple[np.ndarray, Outputs, dict[str, np.ndarray]]:
    """(denominator Σ|a·b|, each side's outputs, each side's worst error against FP64) for the sampled inputs.

    Inputs are rounded once per input format, and an output computed once per arithmetic, vendor and split."""
    denominator: np.ndarray | None = None
    prepared: dict[tuple[str, str], tuple[Operands, np.ndarray, np.ndarray]] = {}
    outputs: dict[tuple[Any, ...], np.ndarray] = {}
    errors: dict[str, np.ndarray] = {}
    per_side: Outputs = {}
    jobs = [(side, arith) for side in sides for arith in side.arithmetics]
    for done, (side, arith) in enumerate(jobs, 1):
        if settings.progress:
            _progress(f"emulating{' ' + label if label else ''}: {side.role} {arith.label} ({done}/{len(jobs)})")
        fmt = (arith.inputs, arith.gpu.vendor)
        if fmt not in prepared:
            prepared[fmt] = _prepared(base_a, base_b, fmt, side.role)
        ops, exact, size = prepared[fmt]
        if denominator is None:
            denominator = np.where(size > 0, size, 1.0)
        key = (arith.key(), arith.gpu.vendor, side.tp)
        out = outputs.get(key)
        if out is None:
            out = outputs[key] = _output(arith, ops, side)
        per_side.setdefault(side.role, []).append((arith, out))
        rel = np.abs(out - exact) / denominator
        worst = errors.get(side.role)
        errors[side.role] = rel if worst is None or rel.max() > worst.max() else worst
    if settings.progress:
        _progress("")
    assert denominator is not None
    return denominator, per_side, errors


def _prepared(
    base_a: np.ndarray, base_b: np.ndarray, fmt: tuple[str, str], role: str
) -> tuple[Operands, np.ndarray, np.ndarray]:
    """The inputs rounded to an input format (inputs, vendor), with their exact products and Σ|a·b|."""
    ops = operands(base_a, base_b, *fmt)
    if not (np.isfinite(ops.a).all() and np.isfinite(ops.b).all()):
        raise BlaslogError(
            f"the inputs overflow {fmt[0].upper()} (the {role} side's input format): give a smaller --scale"
        )
    return (ops, *reference(ops))


def _output(arith: Arithmetic, ops: Operands, side: SideSpec) -> np.ndarray:
    """The side's sampled outputs in one of its arithmetics; BlaslogError when some overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        out = side_output(arith, ops, side.tp)
    bad = int(np.count_nonzero(~np.isfinite(out)))
    if bad:
        raise BlaslogError(
            f"{bad} of {len(out)} sampled outputs of the {side.role} side ({arith.label}) overflow "
            f"{arith.output.upper()} at this --scale: give a smaller one"
        )
    return out


def _combinations(
    first: str, second: str, per_side: Outputs, denominator: np.ndarray
) -> tuple[list[dict[str, Any]], tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """How far each arithmetic of the `first` side is from each of the `second`, and the worst pair
    (difference relative to Σ|a·b|, first's outputs, second's)."""
    combinations = []
    worst_pair: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
    for arith_x, x in per_side[first]:
        for arith_y, y in per_side[second]:
            rel = np.abs(x - y) / denominator
            combinations.append(
                {
                    first: arith_x.label,
                    second: arith_y.label,
                    **{f"difference_{k}": v for k, v in _stats(rel).items()},
                }
            )
            if worst_pair is None or rel.max() > worst_pair[0].max():
                worst_pair = (rel, x, y)
    assert worst_pair is not None
    return combinations, worst_pair


def verdict(
    x: np.ndarray, y: np.ndarray, tol: Tolerance, settings: Settings, first: str, second: str
) -> dict[str, Any]:
    """The share of sampled outputs that fail `|x - y| <= atol + rtol |y|`, and a sentence."""
    gap = np.abs(x - y)
    allowed = tol.atol + tol.rtol * np.abs(y)
    failing = int(np.count_nonzero(gap > allowed))
    share = failing / len(x)
    largest = float(gap.max())
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(allowed > 0, gap / np.where(allowed > 0, allowed, 1.0), np.where(gap > 0, np.inf, 0.0))
    worst_ratio = float(np.max(ratios))
    scale = settings.inputs_source or f"inputs of scale {settings.scale:g}"
    if failing:
        text = (
            f"Against {tol.text()} with {scale}, {failing} of {len(x)} sampled outputs ({share:.1%}) fail from the "
            f"arithmetic alone (largest |x-y| {largest:.3g}): the numerics explain a failure of this size."
        )
    elif worst_ratio >= 0.5:
        text = (
            f"Against {tol.text()} with {scale}, no sampled output fails, but the largest |x-y| ({largest:.3g}) "
            f"reaches {worst_ratio:.0%} of the allowed error: the numerics explain a failure only with larger "
            "inputs, a larger k, or more outputs than were sampled."
        )
    else:
        text = (
            f"Against {tol.text()} with {scale}, no sampled output fails (largest |x-y| {largest:.3g}, "
            f"{worst_ratio:.0%} of the allowed error): the arithmetic difference alone does not explain a failure; "
            "look for another cause (different inputs, a different reduction, a race)."
        )
    return {
        "tolerance": {"atol": tol.atol, "rtol": tol.rtol},
        "compared": f"x: the {first} side, y: the {second} side",
        "failing": failing,
        "fraction_failing": share,
        "largest_abs_difference": largest,
        "largest_share_of_allowed": worst_ratio if np.isfinite(worst_ratio) else None,
        "explains": bool(failing),
        "text": text,
    }


def _histogram(rel: np.ndarray) -> dict[str, list[float]]:
    """Per-sample metric in log10 bins from 1e-10 (exact agreement counted in the first bin) to 1."""
    logs = np.log10(np.clip(rel, 1e-10, 1.0))
    counts, edges = np.histogram(logs, bins=20, range=(-10.0, 0.0))
    return {"log10_edges": [float(e) for e in edges], "counts": [int(c) for c in counts]}


def _progress(text: str) -> None:
    text = "".join(ch for ch in text if ch.isprintable())  # a finding's title comes from a log: no control bytes
    sys.stderr.write("\r\033[K" + text if text else "\r\033[K")
    sys.stderr.flush()
