"""Where a run computes (``device``) and in which precision its heads run (``amp``).

``device``: ``auto`` (CUDA when torch sees a GPU, else the CPU), ``cpu``, ``cuda`` or ``cuda:N``. Asking for CUDA
where torch sees none is a ConfigError (one line, exit code 2), never a silent fall-back to the CPU.

``amp``: ``off`` (fp32 everywhere), ``bf16`` or ``fp16``: the task model's forward pass (mixes, head, loss) runs
under ``torch.autocast`` with that dtype; fp16 also scales the loss (``torch.amp.GradScaler``). The frozen biLM
always computes in fp32 and the activation cache stores fp16, whatever ``amp`` says, so one cache entry serves
every precision.
"""
from __future__ import annotations

import re
from contextlib import nullcontext
from typing import Any, ContextManager

import torch

from elmo_bench.base.errors import ConfigError

DEVICE_CHOICES = ("auto", "cpu", "cuda", "cuda:N")
AMP_DTYPES: dict[str, torch.dtype | None] = {"off": None, "bf16": torch.bfloat16, "fp16": torch.float16}
_DEVICE = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")


def check_device_spec(spec: Any, key: str = "device") -> str:
    """The spec as a string when it has one of the accepted forms, else ConfigError naming ``key``."""
    if not isinstance(spec, str) or not _DEVICE.match(spec):
        raise ConfigError(f"config: {key} expected one of {', '.join(DEVICE_CHOICES)}, found {spec!r}")
    return spec


def resolve_device(spec: Any, key: str = "device") -> torch.device:
    """``auto`` | ``cpu`` | ``cuda`` | ``cuda:N`` → a torch.device that exists on this machine.

    ConfigError (one line) when CUDA is asked for and torch sees no GPU, or ``cuda:N`` names a GPU that is not there.
    """
    spec = check_device_spec(spec, key)
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        build = "this torch build has no CUDA support" if torch.version.cuda is None else "torch sees no GPU"
        raise ConfigError(f"config: {key}={spec} asks for CUDA, but {build} (torch {torch.__version__}); "
                          f"use {key}=cpu or {key}=auto")
    device = torch.device(spec)
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise ConfigError(f"config: {key}={spec} names GPU {device.index}, but torch sees {count} GPU(s) "
                          f"(cuda:0 .. cuda:{count - 1})")
    return device


def normalise_amp(value: Any, key: str = "amp") -> str:
    """``off`` | ``bf16`` | ``fp16`` (YAML's unquoted ``off`` arrives as False and means ``off``)."""
    if value is False or value is None:
        return "off"
    if value not in AMP_DTYPES:
        raise ConfigError(f"config: {key} expected one of {', '.join(AMP_DTYPES)}, found {value!r}")
    return str(value)


def autocast(device: torch.device, amp: str) -> ContextManager[Any]:
    """``torch.autocast`` for ``amp`` on ``device``'s type; a no-op for ``off``."""
    dtype = AMP_DTYPES[normalise_amp(amp)]
    if dtype is None:
        return nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def describe(device: torch.device, requested: str, amp: str) -> dict[str, Any]:
    """What results.json records: the requested spec, the device used, its name, and the precision."""
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    return {"requested": requested, "used": str(device), "name": name, "amp": normalise_amp(amp)}


def cpu_model() -> str:
    """The CPU as Linux reports it (``/proc/cpuinfo``: model name, family, model, stepping: a VM may name only the
    vendor), else ``platform.processor()``, else ''."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                key, _, value = line.partition(":")
                if not key.strip():
                    break                                   # the first processor's block is enough
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        pass
    if "model name" not in fields:
        import platform

        return platform.processor()
    return "{} (family {}, model {}, stepping {})".format(
        fields["model name"], *(fields.get(k, "?") for k in ("cpu family", "model", "stepping")))


def arithmetic() -> dict[str, Any]:
    """What decides a CPU run's floating-point results bit for bit besides the code and the data (recorded beside the
    numbers, never part of a run's identity): the torch build, its intra-op threads, the kernels' instruction set
    (``ATEN_CPU_CAPABILITY`` picks another), the MKL build and the CPU. An Adam-trained MLP probe amplifies a last-bit
    difference in any of them into a different accuracy (docs/results/probe_suite/README.md)."""
    mkl = re.search(r"Math Kernel Library Version ([^\s]+)", torch.__config__.show())
    return {"torch": torch.__version__, "threads": torch.get_num_threads(),
            "cpu_capability": torch.backends.cpu.get_cpu_capability(), "mkl": mkl.group(1) if mkl else None,
            "cpu": cpu_model()}
