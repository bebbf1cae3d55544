"""bench/_ssm.py (python bench/run.py --ssm): its numpy right-hand side is gflow's field, its Jacobian is the
right-hand side's, odeint at its defaults reproduces the notebook's printed number, and the cap stops a run."""

import numpy as np
import pytest

import _ssm as S


@pytest.mark.parametrize("design", ["baseline", "special"])
def test_numpy_field_is_gflows_field_and_its_jacobian(design):
    d = 6
    loss, model0, _ = S.gflow_problem(d, design)
    field = S.Field(d, S.DESIGNS[design][0])
    assert S.same_field(loss, model0, field) <= 1e-12
    a = np.random.RandomState(0).uniform(0.2, 0.9, d)
    eps = 1e-6
    fd = np.stack([(field.rhs(a + eps * e, 0.0) - field.rhs(a - eps * e, 0.0)) / (2 * eps) for e in np.eye(d)], axis=1)
    np.testing.assert_allclose(field.jac(a, 0.0), fd, rtol=1e-6, atol=1e-8)


def test_odeint_defaults_reproduce_the_printed_ext_and_the_cap_stops():
    r = S.odeint_run(10, "baseline", S.ODEINT_DEFAULT_TOL, S.ODEINT_DEFAULT_TOL, False, cap_s=600.0)
    assert r["status"] == "completed"
    assert abs(S.ext_error(r["a"]) - S.PRINTED_EXT["baseline"]) <= 5e-11
    stopped = S.odeint_run(10, "baseline", 1e-8, 1e-8, True, cap_s=0.0)
    assert stopped["status"] == "cap" and stopped["t_reached"] < 1e11
