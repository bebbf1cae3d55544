"""studies/random_init.py: its measurements on hand-checkable cases, bad input, and a tiny end-to-end run."""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import gflow
import random_init as ri
from gflow.problems import random_init as init_problem

TINY = ["--seeds", "3", "--widths", "16", "32", "--lengths", "3", "4", "--d", "3", "--sequences", "2",
        "--eps-x-scan", "0.1", "--ntk-widths", "8", "16", "--ntk-length", "3", "--ntk-d", "2", "--ntk-sequences", "2",
        "--ntk-reference", "4096", "--product-width", "16", "--product-length", "5"]


def _linear_rnn_state(W, A, X):
    h = jnp.zeros(W.shape[0])
    for x in X:
        h = W @ h + A @ x
    return h


def test_least_squares_decoding_is_exact_for_a_linear_rnn_iff_m_covers_the_inputs():
    L, d = 4, 3
    X = jax.random.normal(jax.random.key(0), (L, d), dtype=jnp.float64)
    for m, exact in ((L * d + 4, True), (L * d - 4, False)):
        kW, kA = jax.random.split(jax.random.key(m))
        W = jax.random.normal(kW, (m, m), dtype=jnp.float64) * jnp.sqrt(2.0 / m)
        A = jax.random.normal(kA, (m, d), dtype=jnp.float64) * jnp.sqrt(2.0 / m)
        M = init_problem.decoder_matrix(W, A, jnp.ones((L, m)))  # identity activation: the linear RNN's map X → h_L
        h = _linear_rnn_state(W, A, X)
        np.testing.assert_allclose(M @ X.reshape(-1), h, rtol=1e-12, atol=1e-12)
        error = float(jnp.max(jnp.abs(jnp.linalg.pinv(M) @ h - X.reshape(-1))))
        assert (error < 1e-9) if exact else (error > 0.1), (m, error)


def test_decoder_with_own_patterns_reproduces_the_relu_state_and_the_naive_blocks():
    m, L, d = 24, 5, 3
    model = gflow.models.elman_panigrahi_goyal(jax.random.key(1), m, d)
    x = gflow.objectives.normalized_token_sequences(jax.random.key(2), 1, L, d, eps_x=0.3)[0]
    M = init_problem.decoder_matrix(model.W, model.A, init_problem.patterns_of(model, x))
    np.testing.assert_allclose(M @ x.reshape(-1), model.hidden_states(x)[-1], rtol=1e-12, atol=1e-13)
    # null-sequence patterns are exact on the null sequence itself
    null = gflow.objectives.null_sequence(L, d)
    M0 = init_problem.decoder_matrix(model.W, model.A, init_problem.patterns_of(model, null))
    np.testing.assert_allclose(M0 @ null.reshape(-1), model.hidden_states(null)[-1], rtol=1e-12, atol=1e-13)
    # naive: W̄^[3] = [4 W² A, 4 W A, 2 A]
    W, A = np.asarray(model.W), np.asarray(model.A)
    expected = np.concatenate([4 * W @ W @ A, 4 * W @ A, 2 * A], axis=1)
    np.testing.assert_allclose(init_problem.naive_decoder_matrix(model.W, model.A, 3), expected, rtol=1e-12)


def test_errors_on_known_cases():
    X = jnp.arange(6.0).reshape(3, 2)
    M = jnp.eye(6)
    assert float(init_problem.transpose_error(M, X, X.reshape(-1) + jnp.array([0, 0, 0.5, 0, 0, -2.0]))) == 2.0
    X_hat = X.reshape(-1).at[2].add(0.3).at[3].add(7.0)  # index 3 is token 2's last (bias) coordinate: ignored
    assert float(init_problem.middle_token_error(X_hat, X, 0.1)) == pytest.approx(3.0)
    H = jnp.array([[1.0, 0, 0], [0, 2, 0], [0, 0, 4]])
    assert float(init_problem.norm_ratio(H)) == 4.0


def test_non_collinearity_on_hand_cases():
    e1, e2, e3 = jnp.eye(3)
    nc, smin = init_problem.non_collinearity(jnp.stack([e1, 2 * e2, 3 * e3, e1]))  # orthogonal: min ‖h_l'‖ over later l'
    assert float(nc) == pytest.approx(2.0) and float(smin) == pytest.approx(1.0)
    nc, smin = init_problem.non_collinearity(jnp.stack([e1, e1 + e2, 2 * e1, e3]))  # h_3 ∥ h_1: zero
    assert float(nc) == pytest.approx(0.0, abs=1e-12) and float(smin) < 1e-8
    nc, _ = init_problem.non_collinearity(jnp.stack([e1, e1 + e2, e2, 5 * e1]))  # the last state (l = L) is not used
    assert float(nc) == pytest.approx(np.sqrt(0.5))


def test_backward_rows_equal_explicit_products_and_correlations_are_cosines():
    m, L, d = 6, 4, 3
    model = gflow.models.elman_allen_zhu_li(jax.random.key(3), m, d)
    W, B = np.asarray(model.W), np.asarray(model.B.value)
    x = gflow.objectives.normalized_token_sequences(jax.random.key(4), 1, L, d, eps_x=0.25)[0]
    D = np.asarray(init_problem.patterns_of(model, x))
    R, lengths, ends = init_problem.backward_rows(model.W, model.B.value, jnp.asarray(D))
    rows = {}
    for j in range(1, L + 1):
        for i in range(1, j + 1):
            P = np.eye(m)
            for s in range(j, i, -1):  # B D_j W D_{j−1} W ⋯ D_{i+1} W
                P = P @ np.diag(D[s - 1]) @ W
            rows[(i, j)] = B @ P
            np.testing.assert_allclose(R[j - i, j - 1], rows[(i, j)], rtol=1e-12, atol=1e-14)
    assert lengths[2, 3] == 2 and ends[2, 3] == 4
    cos = lambda a, b: abs(a @ b) / (np.linalg.norm(a) * np.linalg.norm(b))  # noqa: E731
    pairs = [(p, q) for p in rows for q in rows if p < q]
    diff = np.mean([cos(rows[p], rows[q]) for p, q in pairs if p[1] - p[0] != q[1] - q[0]])
    same = np.mean([cos(rows[p], rows[q]) for p, q in pairs if p[1] - p[0] == q[1] - q[0]])
    mean_diff, max_diff, mean_same = init_problem.backward_correlations(model.W, model.B.value, jnp.asarray(D))
    assert float(mean_diff) == pytest.approx(diff, rel=1e-12) and float(mean_same) == pytest.approx(same, rel=1e-12)
    assert float(max_diff) <= 1.0 + 1e-12
    assert init_problem.backward_identity_error(model, x) < 1e-12


def test_perturbation_is_a_signed_permutation_of_spectral_norm_exactly_delta_over_root_m():
    m, delta = 12, 1.5
    P = np.asarray(init_problem.spectral_perturbation(jax.random.key(0), m, delta))
    np.testing.assert_allclose(np.linalg.svd(P, compute_uv=False), delta / np.sqrt(m), rtol=1e-13)
    assert np.all(np.count_nonzero(P, axis=0) == 1) and np.all(np.count_nonzero(P, axis=1) == 1)
    assert not np.allclose(P, init_problem.spectral_perturbation(jax.random.key(1), m, delta))
    assert init_problem.perturbation_norm_error(32) < 1e-12


def test_backward_stability_against_explicit_products():
    m, L, d = 8, 4, 3
    model = gflow.models.elman_allen_zhu_li(jax.random.key(3), m, d)
    W, A, B = (np.asarray(init_problem.unfrozen(v)) for v in (model.W, model.A, model.B))
    x = gflow.objectives.normalized_token_sequences(jax.random.key(4), 1, L, d, eps_x=0.25)[0]
    W_new = W + 0.3 * np.asarray(jax.random.normal(jax.random.key(5), (m, m), dtype=jnp.float64))
    D = np.asarray(init_problem.patterns_of(model, x))
    D_new = np.asarray(init_problem.patterns_of(gflow.models.ElmanRNN(W_new, A, B), x))
    assert np.any(D != D_new)  # the perturbation flips some signs, so D' matters

    def back(W_, D_, i, j):  # B D_j W ⋯ D_{i+1} W
        P = np.eye(m)
        for s in range(j, i, -1):
            P = P @ np.diag(D_[s - 1]) @ W_
        return B @ P

    ratios = [np.linalg.norm(back(W_new, D_new, i, j) - back(W, D, i, j)) / np.linalg.norm(back(W, D, i, j))
              for j in range(2, L + 1) for i in range(1, j)]
    r_max, r_median = init_problem.backward_stability(W, W_new, B, jnp.asarray(D), jnp.asarray(D_new))
    assert float(r_max) == pytest.approx(max(ratios), rel=1e-12)
    assert float(r_median) == pytest.approx(np.median(ratios), rel=1e-12)
    assert float(init_problem.backward_stability(W, W, B, jnp.asarray(D), jnp.asarray(D))[0]) == 0.0


def test_product_norms_are_spectral_norms_of_explicit_products():
    m, L, d = 10, 7, 3
    model = gflow.models.elman_allen_zhu_li(jax.random.key(6), m, d)
    W = np.asarray(model.W)
    x = gflow.objectives.normalized_token_sequences(jax.random.key(7), 1, L, d, eps_x=1 / L)[0]
    D = np.asarray(init_problem.patterns_of(model, x))
    gaps = init_problem.product_gaps(L)
    assert gaps == (1, 2, 3, 4, 5, 6) and init_problem.product_gaps(32) == (1, 2, 3, 4, 7, 12, 19, 31)
    expected = []
    for k in gaps:  # D_{1+k} W ⋯ D_2 W
        P = np.eye(m)
        for s in range(1 + k, 1, -1):
            P = P @ np.diag(D[s - 1]) @ W
        expected.append(np.linalg.norm(P, 2))
    np.testing.assert_allclose(init_problem.product_norms(jnp.asarray(W), jnp.asarray(D), gaps), expected, rtol=1e-12)


def test_null_sequence_drops_exactly_the_scaled_tokens_and_state_distance():
    L, d, eps_x = 6, 4, 0.1
    x = np.asarray(gflow.objectives.normalized_token_sequences(jax.random.key(8), 1, L, d, eps_x=eps_x)[0])
    null = np.asarray(gflow.objectives.null_sequence(L, d))
    differs = np.any(x != null, axis=1)
    assert differs.tolist() == [False] + [True] * (L - 2) + [False]
    assert np.all(null[1:-1] == 0) and np.allclose(np.linalg.norm(x[1:-1], axis=1), eps_x)
    H = jnp.zeros((2, 3, 2)).at[0, 1, 0].set(3.0).at[1, 2].set(jnp.array([3.0, 4.0]))
    np.testing.assert_allclose(init_problem.state_distance(H, jnp.zeros((3, 2))), [3.0, 5.0])


def test_rerandomization_redraws_exactly_n_nested_rows_of_w_and_a():
    m, d = 64, 3
    counts = init_problem.rerandomized_counts(m)
    assert counts == (1, 1, 1, 2, 4) and init_problem.rerandomized_counts(4096) == (16, 32, 64, 128, 256)
    masks = np.asarray(init_problem.nested_rows(jax.random.key(9), m, (3, 5, 20)))
    assert masks.sum(axis=1).tolist() == [3, 5, 20] and np.all(masks[:-1] <= masks[1:])
    model = gflow.models.elman_allen_zhu_li(jax.random.key(10), m, d)
    fresh = gflow.models.elman_allen_zhu_li(jax.random.key(11), m, d)
    W, A = np.asarray(model.W), np.asarray(model.A.value)
    W_r, A_r = (np.asarray(v) for v in init_problem.rerandomize(W, A, fresh.W, fresh.A.value, jnp.asarray(masks[1])))
    changed_W, changed_A = np.any(W_r != W, axis=1), np.any(A_r != A, axis=1)
    assert changed_W.sum() == 5 and np.array_equal(changed_W, masks[1]) and np.array_equal(changed_A, masks[1])
    np.testing.assert_array_equal(W_r[masks[1]], np.asarray(fresh.W)[masks[1]])


@pytest.mark.slow
def test_ntk_of_a_tiny_model_is_j_jt_by_hand_and_matches_proposition_2():
    m, d, T, N, alpha = 4, 2, 3, 2, 0.5
    model = gflow.models.elman_cayci_eryilmaz(jax.random.key(5), m, d, alpha=alpha)
    X = gflow.objectives.unit_ball_sequences(jax.random.key(6), N, T, d)
    c = np.asarray(model.B.value)

    def outputs(theta):  # our own forward: H_t = tanh(w H_{t−1} + U X_{t−1}), F_t = Σ c_i H_t / √m
        w, U = theta[:m], theta[m:].reshape(m, d)

        def one(x):
            h, out = jnp.zeros(m), []
            for t in range(T):
                h = jnp.tanh(w * h + U @ x[t])
                out.append(jnp.sum(c * h) / np.sqrt(m))
            return jnp.stack(out)

        return jax.vmap(one)(X)  # (N, T)

    theta = jnp.concatenate([model.W, model.A.reshape(-1)])
    J = jax.jacfwd(outputs)(theta)  # (N, T, P)
    by_hand = jnp.einsum("atp,btp->tab", J, J)
    np.testing.assert_allclose(gflow.analysis.empirical_ntk(model, X), by_hand, rtol=1e-12, atol=1e-14)
    f = init_problem.proposition2_features(model.W, model.A, X, jnp.tanh)
    np.testing.assert_allclose(jnp.einsum("tmap,tmbp->tab", f, f) / m, by_hand, rtol=1e-12, atol=1e-14)
    args = ri.parse_args(TINY)
    assert init_problem.ntk_identity_error(args, X, 8) < 1e-12


def test_limit_kernel_matches_a_direct_average():
    args = ri.parse_args(TINY + ["--ntk-reference", "1024"])
    X = gflow.objectives.unit_ball_sequences(jax.random.key(7), 2, 3, 2)
    kappa, se = init_problem.limit_kernel(args, X)
    u = jax.random.normal(jax.random.fold_in(jax.random.key(3), 0), (512, 2), dtype=jnp.float64)  # its one chunk
    direct = 0.0
    for sign in (1.0, -1.0):
        f = init_problem.proposition2_features(jnp.full((512,), sign * args.alpha), u, X, jnp.tanh)
        direct = direct + 0.5 * np.asarray(jnp.einsum("tmap,tmbp->tab", f, f)) / 512
    assert args.ntk_reference // 2 == 512
    np.testing.assert_allclose(kappa, direct, rtol=1e-12)
    assert np.all(se > 0) and np.all(np.diagonal(kappa, axis1=1, axis2=2) > 0)


def test_fits_recover_synthetic_exponents():
    ms, Ls = np.array([64.0, 128, 256, 512]), np.array([4.0, 8, 16])
    values = np.stack([3.0 * ms[:, None] ** p * Ls[None, :] ** q for p, q in ((-0.5, 1.0), (-0.25, 0.5))])
    p, q = init_problem.fit_grid(ms, Ls, values)
    np.testing.assert_allclose(p, [-0.5, -0.25], atol=1e-12)
    np.testing.assert_allclose(q, [1.0, 0.5], atol=1e-12)
    rate = init_problem.fit_rate_in_length(ms, Ls, np.exp(0.7 * Ls)[None, None, :] * ms[None, :, None] ** 0.0)
    np.testing.assert_allclose(rate, [0.7], atol=1e-12)
    np.testing.assert_allclose(init_problem.fit_exponent(ms, np.stack([ms**-0.5, 2 * ms**0.1])), [-0.5, 0.1], atol=1e-12)


@pytest.mark.parametrize("extra, match", [
    (["--widths", "16"], "two distinct"),
    (["--lengths", "2", "4"], "lengths"),
    (["--ntk-widths", "9", "16"], "even"),
    (["--d", "2"], "d"),
    (["--eps-x", "-1"], "positive"),
    (["--seeds", "0"], "seeds"),
    (["--ntk-reference", "16"], "twice"),
    (["--product-length", "2"], "product-length"),
    (["--widths", "8", "16"], "24"),
    (["--eps-x", "0.25", "--eps-x-scan"], "eps-x-scan"),
])
def test_bad_input(extra, match, capsys):
    with pytest.raises(SystemExit):
        ri.parse_args(TINY + extra)
    err = capsys.readouterr().err  # argparse's error, naming the flag
    assert match in err and "error: --" in err


@pytest.mark.slow
def test_tiny_run_exits_zero_with_both_kinds_and_all_tags(tmp_path):
    out = str(tmp_path / "ri")
    code = ri.main(TINY + ["--out", out, "--record", ""])
    summary = json.load(open(os.path.join(out, "summary.json")))
    assert code == 0 and summary["sanity_passed"] and os.path.getsize(os.path.join(out, "random_init.png")) > 10_000
    checks = summary["checks"]
    kinds = [c["kind"] for c in checks]
    assert kinds.count("sanity") == 6 and kinds.count("prediction") == 18
    # 004-P15: App. E's upper bound decides; the pre-registered two-sided band is kept beside, untagged
    p15 = [c for c in checks if "004-P15" in c["claim"]]
    assert [(c["direction"], c["predictions"]) for c in p15] == [("<=", ["004-P15"]), ("in", [])]
    # 004-P11: the lemma's own bound (constant 1) is a guard; the prediction is its order in L, and the
    # claim names the level check it replaces
    p11 = [c for c in checks if "004-P11" in c["predictions"]]
    assert [c["kind"] for c in p11] == ["sanity", "prediction", "prediction"]
    assert p11[0]["threshold"] == pytest.approx(1.0 / (4**2 * np.log(32) ** 3))
    assert p11[1]["threshold"] == ri.COLLINEARITY_ORDER_IN_L == -2.0 and p11[1]["direction"] == ">="
    assert "Replaces the check 'median >= 1/L²" in p11[1]["claim"]
    assert all(c["status"] in ("pass", "FAIL", "inconclusive") for c in checks)
    assert all("interval" in c and c["n"] == 3 for c in checks if c["kind"] == "prediction")
    tags = {p for c in checks if c["kind"] == "prediction" for p in c["predictions"]}
    assert tags == {"002-P1", "002-P2", "004-P4", "004-P7", "004-P8", "004-P9", "004-P10", "004-P11", "004-P15",
                    "003-P7"}
    assert summary["config"]["quick"] is False and summary["config"]["seeds"] == 3
    jax.clear_caches()
