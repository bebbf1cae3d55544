"""The options are declared once (gflow.run.RunOptions, shared; gflow.flow.SolveOptions and
gflow.discrete.DiscreteOptions extending it) and every entry point takes them with the same defaults; solver
capabilities are declared on gflow.flow.AbstractGradientFlowSolver."""

from __future__ import annotations

import dataclasses
import inspect

import diffrax
import jax
import jax.numpy as jnp
import pytest

import gflow
from gflow import initializers, teachers
from gflow.flow import AbstractGradientFlowSolver, SOLVE_OPTIONS, SolveOptions

DEFAULTS = {field.name: field.default for field in dataclasses.fields(SolveOptions)}
DISCRETE_DEFAULTS = {field.name: field.default for field in dataclasses.fields(gflow.discrete.DiscreteOptions)}


def keyword_defaults(function) -> dict:
    return {name: p.default for name, p in inspect.signature(function).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


def test_the_options_are_the_fields_of_one_declaration():
    assert SOLVE_OPTIONS == tuple(DEFAULTS)
    assert {"rtol", "atol", "solver", "save_at", "stepsize_controller", "error_control"} <= set(SOLVE_OPTIONS)


@pytest.mark.parametrize("entry", [gflow.solve_flow, gflow.solve_flows], ids=lambda f: f.__name__)
def test_solve_entry_points_take_every_option_with_its_default(entry):
    found = keyword_defaults(entry)
    assert {name: found.get(name, "missing") for name in SOLVE_OPTIONS} == DEFAULTS


def test_flows_and_discrete_runs_share_the_run_options():
    shared = gflow.run.option_names(gflow.run.RunOptions)
    assert {"save_at", "stop_loss", "diverge_factor", "diagnostics"} == set(shared)
    assert set(shared) <= set(SOLVE_OPTIONS) & set(gflow.discrete.DISCRETE_OPTIONS)
    assert {k: DEFAULTS[k] for k in shared} == {k: DISCRETE_DEFAULTS[k] for k in shared}
    assert issubclass(SolveOptions, gflow.run.RunOptions) and issubclass(gflow.discrete.DiscreteOptions,
                                                                          gflow.run.RunOptions)


@pytest.mark.parametrize("entry", [gflow.discrete.run_discrete, gflow.discrete.run_discrete_batch],
                         ids=lambda f: f.__name__)
def test_discrete_entry_points_take_every_option_with_its_default(entry):
    found = keyword_defaults(entry)
    assert {name: found.get(name, "missing") for name in gflow.discrete.DISCRETE_OPTIONS} == DISCRETE_DEFAULTS


def test_lower_flows_takes_a_subset_with_the_same_defaults():
    found = keyword_defaults(gflow.flow.lower_flows)
    assert set(found) <= set(SOLVE_OPTIONS)
    assert {k: v for k, v in found.items() if k != "save_at"} == {k: DEFAULTS[k] for k in found if k != "save_at"}


def test_run_sweep_passes_on_exactly_the_solve_options(tmp_path):
    with pytest.raises(gflow.GflowInputError) as error:
        gflow.run_sweep({"seed": [0]}, lambda seed: None, str(tmp_path), t1=1.0, progress=False, rtoll=1e-6)
    assert f"run_sweep passes on {list(SOLVE_OPTIONS)}" in str(error.value)


@pytest.mark.parametrize("save_at, match", [
    ("200", "an int count of log-spaced save times or an array of times .*got the string '200'"),
    (True, "got the bool True"),
    ({"a": 1}, "an int count of log-spaced save times or an array of times"),
])
def test_save_at_that_is_neither_a_count_nor_times(save_at, match):
    loss = gflow.PopulationLoss(teachers.balanced(jax.random.key(0), 2), 3)
    with pytest.raises(gflow.GflowInputError, match=match):
        gflow.solve_flow(loss, initializers.gaussian(jax.random.key(1), 2, scale=0.3), 1.0, save_at=save_at)


def test_gflow_solvers_declare_their_work_on_the_interface():
    for solver in (gflow.flow.GaussNewtonRosenbrock(), gflow.flow.RodasGradientFlow()):
        assert isinstance(solver, AbstractGradientFlowSolver) and isinstance(solver, diffrax.AbstractSolver)
        assert solver.evaluations_per_step > 0 and solver.linear_solves_per_step > 0
    assert gflow.flow.RodasGradientFlow.counts_hessian_vector_products
    assert not gflow.flow.GaussNewtonRosenbrock.counts_hessian_vector_products
    assert gflow.flow.GaussNewtonRosenbrock().for_rtol(jnp.asarray(1e-8)) == gflow.flow.GaussNewtonRosenbrock()
    assert gflow.flow.STOCK_EVALUATIONS_PER_STEP[diffrax.Tsit5] == 6


def test_a_solver_that_does_not_declare_its_work_cannot_be_made():
    class Undeclared(AbstractGradientFlowSolver):  # no evaluations_per_step, linear_solves_per_step
        term_structure = diffrax.AbstractTerm
        interpolation_cls = diffrax.LocalLinearInterpolation

        def order(self, terms):
            return 1

        def init(self, terms, t0, t1, y0, args):
            return None

        def step(self, terms, t0, t1, y0, args, solver_state, made_jump):
            raise NotImplementedError

        def func(self, terms, t0, y0, args):
            raise NotImplementedError

    with pytest.raises(TypeError, match="abstract class attributes .*evaluations_per_step"):
        Undeclared()
