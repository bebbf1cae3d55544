"""A Dask executor for :func:`gflow.run_sweep` from a short description (the optional ``distributed`` extra).

``"local:4"`` starts a ``LocalCluster`` of 4 worker processes (one thread each: a flow batch keeps a core busy
with XLA's own threads) on this machine; ``"tcp://host:8786"`` connects to a running scheduler; a path ending in
``.json`` is a scheduler file (``dask scheduler --scheduler-file ...``, the usual way on SLURM/PBS). Workers on other
machines need the same gflow installed (a sweep refuses a worker with other gflow source) and must see the output
folder.
"""

from __future__ import annotations

import contextlib
import re

from .._checks import GflowInputError

INSTALL_HINT = 'pip install -c constraints.txt -e ".[distributed]" (in the gflow checkout)'


def _distributed():
    try:
        import distributed
    except ImportError:
        raise GflowInputError(f"running a sweep on Dask needs the `distributed` package: {INSTALL_HINT}") from None
    return distributed


@contextlib.contextmanager
def dask_executor(spec: str | None, *, quiet: bool = True):
    """Yield a ``concurrent.futures.Executor`` on Dask for ``spec`` (module docstring), or None for ``spec=None``
    (run in this process); the cluster started here is closed at the end of the block.

    Args:
        spec: The cluster to use (module docstring), or None.
        quiet: Silence Dask's logging.

    Returns:
        A context manager yielding the executor (or None).
    """
    if spec is None:
        yield None
        return
    if not isinstance(spec, str) or not spec:
        raise GflowInputError(f"a Dask executor is 'local:N', a scheduler address or a scheduler file, got {spec!r}")
    distributed = _distributed()
    local = re.fullmatch(r"local(?::(\d+))?", spec)
    with contextlib.ExitStack() as stack:
        if local:
            n = int(local.group(1) or 2)
            if n < 1:
                raise GflowInputError(f"'local:N' needs N ≥ 1 workers, got {spec!r}")
            import logging

            cluster = stack.enter_context(distributed.LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                silence_logs=logging.ERROR if quiet else logging.INFO))
            client = stack.enter_context(distributed.Client(cluster))
        elif spec.endswith(".json"):
            client = stack.enter_context(distributed.Client(scheduler_file=spec))
        else:
            try:
                client = stack.enter_context(distributed.Client(spec, timeout="30s"))
            except OSError as e:
                raise GflowInputError(f"could not reach a Dask scheduler at {spec!r}: {e}") from None
        yield client.get_executor()
