"""What everything else stands on, importing nothing else of ours: user-fixable errors, atomic writes, the
device and precision of a run, and the roots every path hangs from (paths.py)."""
