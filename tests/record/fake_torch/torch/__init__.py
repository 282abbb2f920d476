"""A stand-in for torch with the attributes blaslog's start-up hook reads (tests of `blaslog record`)."""

from types import SimpleNamespace

__version__ = "2.5.1+fake"
version = SimpleNamespace(cuda="12.4", hip=None)
_precision = ["highest"]
_started = [False]


def get_float32_matmul_precision():
    return _precision[0]


def set_float32_matmul_precision(value):
    _precision[0] = value


def are_deterministic_algorithms_enabled():
    return False


def _init():
    _started[0] = True


backends = SimpleNamespace(
    cuda=SimpleNamespace(
        matmul=SimpleNamespace(
            allow_tf32=False, allow_fp16_reduced_precision_reduction=True, allow_bf16_reduced_precision_reduction=True
        ),
        preferred_blas_library=lambda: "_BlasBackend.Cublas",
    ),
    cudnn=SimpleNamespace(allow_tf32=True, version=lambda: 90100),
)
cuda = SimpleNamespace(
    init=_init,
    is_initialized=lambda: _started[0],
    current_device=lambda: 0,
    get_device_name=lambda device=0: "NVIDIA Fake GPU",
    get_device_capability=lambda device=0: (9, 0),
)
distributed = SimpleNamespace(is_available=lambda: True, is_initialized=lambda: False)
