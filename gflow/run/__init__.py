"""What every run shares, flow or discrete: the options common to :func:`gflow.solve_flow` and the discrete runners
(:class:`RunOptions`, extended by :class:`gflow.flow.SolveOptions` and :class:`gflow.discrete.DiscreteOptions`),
their validation (the model and loss, a stacked batch, save times, diagnostics, divergence limits), where a flow's
default save times begin (its first time scale, :func:`flow_time_scale`), the progress
lines of a run between compiled calls, and the assembly of a batch's results (:class:`gflow.FlowBatch`).

Beneath both integrators (docs/design.md, "Layers"): :mod:`gflow.flow` and :mod:`gflow.discrete` import it, and it
imports only models, objectives and results."""

from ._assembly import batch_diagnostics as batch_diagnostics, on_host as on_host
from ._options import option_names as option_names, RunOptions as RunOptions
from ._progress import QUIET_SECONDS as QUIET_SECONDS, StepProgress as StepProgress
from ._save_times import (
    first_save_offset as first_save_offset,
    is_count as is_count,
    log_save_steps as log_save_steps,
    log_save_times as log_save_times,
    save_steps as save_steps,
    save_times as save_times,
)
from ._time_scale import flow_time_scale as flow_time_scale
from ._validation import (
    check_callable_loss as check_callable_loss,
    check_diagnostics as check_diagnostics,
    check_model_and_loss as check_model_and_loss,
    diagnostic_functions as diagnostic_functions,
    diverge_limits as diverge_limits,
    validate_batch as validate_batch,
)
