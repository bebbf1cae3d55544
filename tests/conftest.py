"""Shared configuration and fixtures for the gflow test suite.

float64 everywhere and strict dtype promotion (as diffrax's own test suite does), so that an accidental
float32 or a silent int/float promotion inside gflow shows up as an error here.
"""

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_numpy_dtype_promotion", "strict")

import os  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gflow  # noqa: E402
from gflow import teachers  # noqa: E402


def matrix_power_impulse_response(A, B, C, n):
    """h_j = C A^j B by explicit numpy matrix powers (the reference the package must agree with)."""
    A, B, C = (np.asarray(x, dtype=np.float64) for x in (A, B, C))
    return np.stack([C @ np.linalg.matrix_power(A, j) @ B for j in range(n)])


def assert_never_rises(loss, traj, model0):
    """Every saved L_{i+1} ≤ L_i + ε(θ_i) + ε(θ_{i+1}) (the guard's δ, gflow.flow.loss_rounding)."""
    eps = gflow.flow.loss_rounding_along(loss, model0, traj.params)
    rise = np.diff(traj.loss) - (eps[:-1] + eps[1:])
    assert np.all(np.isfinite(traj.loss)), traj.loss
    assert np.all(rise <= 0), f"saved loss rises by {np.max(rise):.3g} beyond δ at row {int(np.argmax(rise)) + 1}"


def assert_same_bits(runs, reference):
    """Two sweeps' runs (gflow.run_sweep) are the same runs with the same bits: arrays, records and the stored
    arrays file, byte for byte."""
    assert [r.name for r in runs] == [r.name for r in reference]
    for a, b in zip(runs, reference):
        assert a.status == b.status and a.program_size == b.program_size
        for key in ("ts", "loss", "final_params"):
            np.testing.assert_array_equal(a.arrays[key], b.arrays[key])
        assert a.record.keys() == b.record.keys()
        for key in a.record:
            np.testing.assert_array_equal(a.record[key], b.record[key])
        with open(os.path.join(a.path, "arrays.npz"), "rb") as fa, open(os.path.join(b.path, "arrays.npz"), "rb") as fb:
            assert fa.read() == fb.read()


@pytest.fixture(scope="session")
def ir_ref():
    """The numpy reference impulse response as a fixture: ir_ref(A, B, C, n)."""
    return matrix_power_impulse_response


@pytest.fixture(scope="session")
def balanced_teacher():
    """A small balanced diagonal teacher (d̂ = 3, w0 = 1)."""
    return teachers.balanced(jax.random.key(0), 3)


@pytest.fixture(scope="session")
def small_loss(balanced_teacher):
    """Population loss of the small balanced teacher at k = 5 (convention "L")."""
    return gflow.PopulationLoss(balanced_teacher, 5)


REF_T1 = 10.0
REF_SAVES = 25  # every flow on the small problem uses 25 save times, so the compiled solve is reused


@pytest.fixture(scope="session")
def general_start():
    """An unbalanced, general-A start (d = 4, ε = 0.3)."""
    from gflow import initializers

    return initializers.gaussian(jax.random.key(1), 4, scale=0.3)


@pytest.fixture(scope="session")
def reference_flow(small_loss, general_start):
    """One completed flow on the small problem, shared by the flow and trajectory tests."""
    from gflow import analysis

    return gflow.solve_flow(small_loss, general_start, REF_T1, save_at=REF_SAVES,
                            diagnostics={"rho_bal": analysis.balance_ratio, "Q": analysis.balance_matrix})


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module. Every CPU executable holds memory mappings of its own,
    and the whole suite in one process compiles thousands: without this the process reached Linux's default limit of
    65 530 mappings (vm.max_map_count) two thirds through and segfaulted inside XLA's compiler (2026-11-26). The
    persistent compilation cache still serves the next module."""
    yield
    jax.clear_caches()
