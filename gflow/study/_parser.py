"""Every study's command line: ``--out``, ``--quick``, ``--record`` and ``--help`` from its docstring; defaults that
differ under ``--quick`` (:class:`QuickFull`) resolved after parsing; the study's own checks of its arguments turned
into argparse errors that name the flag (``error: --teacher-dim must be positive, got 0``), not tracebacks. What a
study derives from its options is checked here too (an rtol's rtol/100 repeat, a ``--solver`` name), so that a bad
number fails at parse time with the user's own value in the message, not minutes into the run."""

from __future__ import annotations

import argparse

from .._checks import GflowInputError
from ..flow import SOLVER_REGISTRY
from ._quick_full import QuickFull, resolve_quick_full
from ._record import default_results_dir, note_code_at_start
from ._tolerance import check_rtol_flags


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's "(default: …)" suffix, except where the help text already says its default or there is none."""

    def _get_help_string(self, action):
        text = action.help or ""
        if action.default is None or "default" in text.lower():
            return text
        return super()._get_help_string(action)


class StudyParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that, after parsing, resolves :class:`QuickFull` defaults and runs ``validate(args)``:
    a :class:`GflowInputError` it raises (its message names the flag) exits like any argparse error."""

    def __init__(self, *a, validate=None, **kw):
        super().__init__(*a, **kw)
        self.validate = validate
        self.rtol_flags = []  # (flag, repeat) of each rtol_option: checked after parsing, with its rtol/100 repeat

    def parse_known_args(self, args=None, namespace=None):
        parsed, rest = super().parse_known_args(args, namespace)
        resolve_quick_full(parsed)
        try:
            check_rtol_flags(parsed, self.rtol_flags)
            check_solver_flag(parsed)
            if self.validate is not None:
                self.validate(parsed)
        except GflowInputError as e:
            self.error(str(e))
        return parsed, rest

    def require_positive(self, args, *names: str) -> None:
        """:func:`require_positive` as an argparse error (exits with the message naming the flag).

        Args:
            args: the parsed arguments.
            *names: ``dest`` names of the arguments that must be positive.
        """
        try:
            require_positive(args, *names)
        except GflowInputError as e:
            self.error(str(e))


def check_solver_flag(args) -> None:
    """A study's ``--solver`` (where it declares one) names a solver :func:`gflow.solve_flow` knows, checked after
    parsing rather than at the study's first solve.

    Args:
        args: the parsed arguments.

    Raises:
        GflowInputError: naming the flag and the user's value.
    """
    solver = getattr(args, "solver", None)
    if not isinstance(solver, str):
        return
    if solver.lower() not in SOLVER_REGISTRY and solver != "auto":
        raise GflowInputError(f"--solver must be 'auto' or one of {sorted(SOLVER_REGISTRY)}, got {solver!r}")


def require_positive(args, *names: str) -> None:
    """Check that arguments are positive numbers (every value of a list; NaN is not).

    Args:
        args: the parsed arguments.
        *names: ``dest`` names of the arguments.

    Raises:
        GflowInputError: naming the flag, e.g. ``--teacher-dim must be positive, got 0``.
    """
    for name in names:
        value = getattr(args, name)
        if not all(v > 0 for v in (value if isinstance(value, list) else [value])):
            raise GflowInputError(f"--{name.replace('_', '-')} must be positive, got {value}")


def study_parser(doc: str, out: str, out_help: str, quick_help: str, *, validate=None) -> StudyParser:
    """The parser every study starts from, and the note of the study's code hash as it starts.

    Args:
        doc: the study's docstring; its first paragraph is ``--help``'s description.
        out: the default of ``--out``.
        out_help: the help of ``--out``.
        quick_help: what ``--quick`` makes smaller.
        validate: ``validate(args)`` checks the parsed arguments (raise :class:`GflowInputError` naming the flag).

    Returns:
        A :class:`StudyParser` with ``--out``, ``--quick`` and ``--record``, defaults shown in ``--help``.
    """
    note_code_at_start()
    p = StudyParser(description=doc.split("\n\n")[0], formatter_class=_DefaultsHelpFormatter,
                    validate=validate)
    p.add_argument("--out", default=out, help=out_help)
    p.add_argument("--quick", action="store_true",
                   help=quick_help + "; a smoke test of every code path: prediction checks may fail or stay "
                        "inconclusive (too few seeds), only an error or a failed sanity check makes it exit non-zero")
    p.add_argument("--record", default=default_results_dir(), metavar="DIR",
                   help="where a full (not --quick) run writes its small result file <study>.json for "
                        "studies/validation.py (default: validation/results of this checkout); '' to not record")
    return p


def dask_option(p: argparse.ArgumentParser) -> None:
    """Declare ``--dask SPEC`` for a study that runs sweeps: where to run them (:func:`gflow.sweep.dask_executor`).

    Args:
        p: the study's parser.
    """
    p.add_argument("--dask", default=None, metavar="SPEC",
                   help="run the sweeps on Dask (needs gflow[distributed]): 'local:N' for N worker processes on this "
                        "machine, a scheduler address (tcp://host:8786) or a scheduler file (.json); default: in this "
                        "process")


def sweep_options(p: argparse.ArgumentParser) -> None:
    """Declare ``--n-save``, ``--batch-size``, ``--slots`` and ``--dask`` (:func:`dask_option`) for a study that runs
    its flows as sweeps.

    Args:
        p: the study's parser.
    """
    p.add_argument("--n-save", type=int, default=QuickFull(250, quick=150), help="saved times per run")
    p.add_argument("--batch-size", type=int, default=96, help="flows per batched solve (per task on Dask)")
    p.add_argument("--slots", type=int, default=None,
                   help="run each batch through this many refilling slots (a finished flow's slot takes the next "
                        "flow, so a batch costs its total steps over the slots, not its slowest flow times its size; "
                        "e.g. --slots 16 on a CPU, 1024 on a GPU). Results agree with the default lock-step batches "
                        "to rounding and are stored as other runs (default: lock-step)")
    dask_option(p)
