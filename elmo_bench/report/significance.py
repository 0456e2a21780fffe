"""The one-sided significance rule every paired bootstrap of the report uses, after Berg-Kirkpatrick et al. (2012).

Pure maths on resampled differences: shared by the bootstrap over per-example scores (report/bootstrap.py) and the
one over per-example sufficient statistics (report/statistics.py), so neither module imports the other for it.
"""
from __future__ import annotations

import numpy as np


def p_value(deltas: np.ndarray, observed: float) -> float:
    """One-sided: share of resampled differences at least 2 x observed (add-one smoothed); 1.0 when the observed
    difference is not positive. ``deltas``: (resamples,)."""
    if observed <= 0:
        return 1.0
    return float((1 + np.sum(deltas >= 2 * observed)) / (len(deltas) + 1))
