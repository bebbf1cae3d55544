"""The store of traced solves (gflow.flow.exported_call): a fresh process runs a stored program without
tracing it, bit for bit as the process that stored it; the key changes with everything the program depends on, and a
call the key cannot describe exactly (a class defined outside gflow) is never stored."""

import glob
import os

import equinox as eqx
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
from gflow.flow import program_key, Uncacheable
from test_batched_flows import _python

SOLVE = """
    import numpy as np, gflow
    import gflow.flow._integrate as integrate_module
    if {forbid_tracing}:
        def refuse(*args, **kwargs):
            raise AssertionError("traced although the program was stored")
        integrate_module.integrate_one = integrate_module._integrate_jit = refuse
    teacher = gflow.LinearRNN(np.array([0.5, 0.2]), np.array([1.0, 0.5]), np.array([1.0, -0.5]), structure="diagonal")
    loss = gflow.PopulationLoss(teacher, 6)
    model0 = gflow.LinearRNN(np.array([0.1, 0.05]), np.array([0.3, 0.2]), np.array([0.2, 0.1]), structure="diagonal")
    traj = gflow.solve_flow(loss, model0, 50.0, save_at=5, progress=False)
    print(traj.status, np.asarray(traj.params).tobytes().hex())
"""


@pytest.mark.slow
def test_a_fresh_process_runs_the_stored_program_without_tracing_it(tmp_path):
    env = dict(GFLOW_CACHE_DIR=str(tmp_path))
    first = _python(SOLVE.format(forbid_tracing=False), **env).split()
    stored = glob.glob(os.path.join(str(tmp_path), "gflow-programs", "*.jaxexport"))
    assert len(stored) == 1
    second = _python(SOLVE.format(forbid_tracing=True), **env).split()
    assert first[0] == "completed" and second == first  # the same bits
    # negative control: with the store off, the second process must trace (and the planted refusal fires)
    with pytest.raises(AssertionError, match="traced although"):
        _python(SOLVE.format(forbid_tracing=True), GFLOW_PROGRAM_CACHE="0", **env)


def _args(solver="rodas5p-dense", d=2, t1=1.0):
    teacher = gflow.LinearRNN(np.linspace(0.3, 0.5, d), np.ones(d), np.ones(d), structure="diagonal")
    model0 = gflow.LinearRNN(np.linspace(0.1, 0.2, d), np.ones(d), np.ones(d), structure="diagonal")
    return (gflow.PopulationLoss(teacher, 6), model0, solver, np.asarray(t1))


def test_the_key_changes_with_what_the_program_depends_on(monkeypatch):
    key = program_key("f", _args())
    assert key == program_key("f", _args())  # deterministic
    assert key == program_key("f", _args(t1=2.0))  # an array's value is an input, not part of the program
    assert key != program_key("f", _args() + (2.0,))  # a Python float is part of the program
    assert key != program_key("g", _args())
    assert key != program_key("f", _args(solver="rosenbrock"))  # a static value
    assert key != program_key("f", _args(d=3))  # a shape
    monkeypatch.setenv("GFLOW_KRYLOV", "doubling")  # a switch tracing reads
    assert key != program_key("f", _args())


class _UserLoss(eqx.Module):
    def __call__(self, model):
        return jnp.sum(model.A ** 2)


def test_a_class_defined_outside_gflow_is_never_stored():
    with pytest.raises(Uncacheable):
        program_key("f", (_UserLoss(), 1.0))
    with pytest.raises(Uncacheable):
        program_key("f", (lambda x: x,))
