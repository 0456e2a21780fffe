"""``python run.py ARGS`` (or ``python -m MODULE ARGS``) in a new process that starts with the heavy third-party
imports already done, for the tests that run the program as a user does.

Each such command is a new process: a fork of one "warm" process per test worker that has imported torch (and the
``torch._dynamo`` that torch's optimizers import on first use), numpy, Hydra, OmegaConf, scikit-learn (seqeval's
import) and h5py, nothing of elmo_bench, and never ran anything. The child then does what the interpreter does for
the same command line: its own working directory, environment, ``sys.argv``, ``sys.path[0]`` and the PYTHONPATH
entries after it, stdin from /dev/null, stdout and stderr to files, ``__main__`` run, ``SystemExit`` turned into the
exit code, a traceback and exit 1 on any other exception, atexit handlers run. About 2.5 s of imports a command (of
2.5 to 6 s) are saved.

Only plain command lines are taken (``SCRIPT ARGS`` or ``-m MODULE ARGS``), and only where the environment agrees
with the warm process's in every variable its imports may read (READ_AT_IMPORT; PYTHONPATH is applied to sys.path,
and variables an import sets itself are set again by it): any other difference, or an interpreter flag, runs a plain
``subprocess.run``. Tests about what a
process imports, about process groups or signals keep using ``subprocess`` themselves.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Mapping, Sequence

#: third-party modules every run.py command imports (about 2.5 s together on the 2-core test machine)
PRELOAD = ("numpy", "torch", "torch._dynamo", "hydra", "hydra._internal.utils", "omegaconf", "yaml", "sklearn.base",
           "seqeval.metrics", "h5py", "tqdm")
#: prefixes of the environment variables PRELOAD's imports may read (thread pools, allocators, kernels, the
#: interpreter): a command whose environment differs from the warm process's in one of them runs a real process
READ_AT_IMPORT = ("OMP_", "MKL", "KMP_", "OPENBLAS", "GOTO", "BLIS", "NUMEXPR", "NPY_", "NUMPY", "SCIPY", "SKLEARN",
                  "TORCH", "PYTORCH", "ATEN", "CUDA", "NVIDIA", "DNNL", "ONEDNN", "LD_", "PYTHON", "HDF5", "H5PY",
                  "TQDM", "HYDRA", "OC_", "MALLOC", "XLA")
#: the environment when the tests were collected: a test's monkeypatched variables do not reach the warm process
SESSION_ENV = dict(os.environ)

_SERVER = r"""
import json, os, sys, traceback
inherited = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
for name in sys.argv[1].split(","):
    __import__(name)
requests = os.fdopen(int(sys.argv[2]), "rb", buffering=0)
replies = os.fdopen(int(sys.argv[3]), "w", buffering=1)
replies.write(json.dumps(dict(os.environ)) + "\n")
while True:
    line = b""
    while not line.endswith(b"\n"):
        chunk = requests.read(1)
        if not chunk:
            os._exit(0)
        line += chunk
    req = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            requests.close(); replies.close()
            os.chdir(req["cwd"])
            for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, req["out"], os.O_WRONLY), (2, req["err"], os.O_WRONLY)):
                opened = os.open(path, flags)
                os.dup2(opened, fd)
                os.close(opened)
            os.environ.clear(); os.environ.update(req["env"])
            import runpy
            sys.argv = list(req["argv"])
            paths = [os.path.abspath(p) for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
            sys.path[1:] = [*paths, *(p for p in sys.path[1:] if p not in inherited)]
            try:
                if req["module"]:
                    sys.path[0] = os.getcwd()
                    runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
                else:
                    sys.path[0] = os.path.dirname(os.path.abspath(req["argv"][0]))
                    runpy.run_path(req["argv"][0], run_name="__main__")
                code = 0
            except SystemExit as stop:
                if stop.code is None:
                    code = 0
                elif isinstance(stop.code, int):
                    code = stop.code
                else:
                    print(stop.code, file=sys.stderr); code = 1
            except BaseException:
                traceback.print_exc(); code = 1
        finally:
            try:
                import atexit; atexit._run_exitfuncs()
                sys.stdout.flush(); sys.stderr.flush()
            finally:
                os._exit(code & 0xFF)
    replies.write(f"{pid}\n")
    _, status = os.waitpid(pid, 0)
    replies.write(f"{os.waitstatus_to_exitcode(status)}\n")
"""


class WarmPython:
    """One warm process (started on first use) and the commands forked from it."""

    def __init__(self, preload: Sequence[str] = PRELOAD, env: Mapping[str, str] | None = None) -> None:
        self.preload, self.env = tuple(preload), dict(SESSION_ENV if env is None else env)
        self.process: subprocess.Popen | None = None
        self.set_by_imports: set[str] = set()

    def _server(self) -> subprocess.Popen:
        if self.process is None or self.process.poll() is not None:
            request_read, request_write = os.pipe()
            reply_read, reply_write = os.pipe()
            self.process = subprocess.Popen(
                [sys.executable, "-c", _SERVER, ",".join(self.preload), str(request_read), str(reply_write)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=self.env,
                pass_fds=(request_read, reply_write))
            os.close(request_read), os.close(reply_write)
            self.requests, self.replies = os.fdopen(request_write, "wb", buffering=0), os.fdopen(reply_read, "rb", 0)
            atexit.register(self.close)
            warm_env = json.loads(self._reply(120))           # scikit-learn's import sets KMP_* variables itself
            self.set_by_imports = {k for k in warm_env if k not in self.env}
        return self.process

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.requests.close()
            self.process.wait(timeout=30)

    def takes(self, args: Sequence[str], env: Mapping[str, str] | None) -> bool:
        """A plain script or ``-m`` command line, in an environment that agrees with the warm process's in every
        variable PRELOAD's imports may read."""
        plain = bool(args) and (not args[0].startswith("-") or args[0] == "-m" and len(args) > 1)
        if not plain:
            return False
        self._server()
        stable = lambda e: {k: v for k, v in e.items()  # noqa: E731
                            if k.startswith(READ_AT_IMPORT) and k not in self.set_by_imports and k != "PYTHONPATH"}
        return stable(os.environ if env is None else env) == stable(self.env)

    def run(self, args: Sequence[str], *, cwd: str | Path, env: Mapping[str, str] | None = None,
            timeout: float | None = None) -> subprocess.CompletedProcess:
        """``subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout)``, forked from the warm process where it can be."""
        if not self.takes(args, env):
            return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=timeout)
        with tempfile.TemporaryDirectory(prefix="warm_python_") as scratch:
            out, err = Path(scratch, "stdout"), Path(scratch, "stderr")
            out.touch(), err.touch()
            module = args[1] if args[0] == "-m" else None
            argv = [args[0] if module is None else module, *args[(2 if module else 1):]]
            request = {"cwd": str(cwd), "env": dict(os.environ if env is None else env), "argv": argv,
                       "module": module, "out": str(out), "err": str(err)}
            self._server()
            self.requests.write((json.dumps(request) + "\n").encode())
            pid = int(self._reply(None))
            try:
                code = int(self._reply(timeout))
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                self._reply(None)
                raise subprocess.TimeoutExpired([sys.executable, *args], timeout,
                                                out.read_text(errors="replace"), err.read_text(errors="replace"))
            return subprocess.CompletedProcess([sys.executable, *args], code, out.read_text(errors="replace"),
                                               err.read_text(errors="replace"))

    def _reply(self, timeout: float | None) -> str:
        if timeout is not None and not select.select([self.replies], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired("warm python", timeout)
        line = b""
        while not line.endswith(b"\n"):
            chunk = self.replies.read(1)
            if not chunk:
                raise RuntimeError("the warm python process ended")
            line += chunk
        return line.decode().strip()


_WARM: WarmPython | None = None


def warm() -> WarmPython:
    """This test process's warm process (one per worker: starting one costs the imports it saves)."""
    global _WARM
    if _WARM is None:
        _WARM = WarmPython()
    return _WARM


def run_python(args: Sequence[str], *, cwd: str | Path, env: Mapping[str, str] | None = None,
               timeout: float | None = None) -> subprocess.CompletedProcess:
    """``python ARGS`` as a user runs it, captured as text (see the module docstring)."""
    return warm().run(args, cwd=cwd, env=env, timeout=timeout)
