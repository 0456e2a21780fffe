"""Each linear fit of a ``probe=conditional`` run, on its training split: input width, training bits per token,
whether L-BFGS converged, and the squared norm of the weights, one ``FIT {...}`` JSON line on stderr per fit.

A negative gain (the probe on [b; layer] scores worse on test than the probe on b alone) is read against these:
a joint fit with far fewer training bits than test bits overfits the training split at the fixed L2. This wraps
``elmo_bench.probe.conditional.fit_lookup_softmax`` and runs ``run.py`` in this process with the given overrides,
so the fits are the run's own (docs/results/bits_erasure/README.md, the MiniLM section):

    python scripts/conditional_training_fit.py probe=conditional budget=cpu probe.baseline=layer0 \\
        'probe.layers=[0,6]' encoder=transformers encoder.path=DIR seed=0 hydra.run.dir=/tmp/fit_check
"""
from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def measured(fit: Any) -> Any:
    """``fit`` (fit_lookup_softmax) that also prints what the fitted probe does on its own training inputs."""
    def wrapper(x: Any, words: Any, y: Any, *args: Any, **kwargs: Any) -> Any:
        probe = fit(x, words, y, *args, **kwargs)
        info = {"width": None if x is None else int(x.shape[1]), "lookup": words is not None,
                "train_tokens": int(len(y)), "train_bits": float(probe.bits(x, words, y).mean()),
                "converged": bool(probe.converged)}
        if probe.weight is not None:
            info["weight_norm_sq"] = float((probe.weight.detach() ** 2).sum())
        print("FIT " + json.dumps(info), file=sys.stderr, flush=True)
        return probe
    return wrapper


def main() -> None:
    sys.path.insert(0, str(REPO))   # this checkout's package, as run.py itself imports it (not an installed one)
    from elmo_bench.probe import conditional

    conditional.fit_lookup_softmax = measured(conditional.fit_lookup_softmax)
    sys.argv = [str(REPO / "run.py"), *sys.argv[1:]]
    runpy.run_path(str(REPO / "run.py"), run_name="__main__")


if __name__ == "__main__":
    main()
