"""What labrun's plotting scripts share (plot_report.py, plot_history.py): matplotlib on the non-interactive Agg
backend, and the reading of one number from a CSV cell or a JSON value. Installed beside them (share/labrun/) and
copied beside a runner with them (cmake/labrunRunner.cmake): they import it from their own folder.
"""

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (the backend must be chosen first; the scripts import plt from here)


def number(x):
    """A finite float from `x` (a CSV cell's text, a JSON number or null), or None when `x` is empty, null, not a
    number, infinite or NaN. Units are the caller's: the value is returned as written. Raises nothing."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
