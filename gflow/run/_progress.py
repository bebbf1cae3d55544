"""Progress lines of a run printed from the host between compiled calls (a discrete run's chunks of steps), and the
quiet period of ``progress="auto"`` shared by every run."""

from __future__ import annotations

import time

QUIET_SECONDS = 5.0  # progress="auto" reports only runs that have run longer than this


class StepProgress:
    """Progress lines for a discrete run (GD, SGD, Adam), printed from the host between compiled chunks of
    steps: nothing during the first ``quiet_seconds``, then at most one line every ``every_seconds``.

    Args:
        label: What the lines name (the method, and the batch size of a batch).
        total_steps: The run's steps, for the percentage.
        quiet_seconds: Wall time before the first line.
        every_seconds: Wall time between lines.
    """

    def __init__(self, label: str, total_steps: int, quiet_seconds: float, every_seconds: float = 2.0):
        self.label, self.total = label, total_steps
        self.quiet, self.every = quiet_seconds, every_seconds
        self.start = time.perf_counter()
        self.last = -float("inf")
        self.printed = False

    def update(self, step: int, t: float, final: bool = False) -> None:
        """Report ``step`` if due.

        Args:
            step: The steps taken so far.
            t: The run's time t_n there.
            final: Report the end of a run that has reported before.
        """
        now = time.perf_counter()
        elapsed = now - self.start
        due = now - self.last >= self.every and elapsed >= self.quiet
        if (final and self.printed) or (due and not final):
            self.last, self.printed = now, True
            print(f"  [{self.label} +{elapsed:6.1f}s] step {step} / {self.total} ({100 * step / self.total:5.1f}%), "
                  f"t = {t:.4g}", flush=True)
