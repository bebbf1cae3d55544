"""The nonlinear RNNs of seeds 002, 003 and 004 at random initialization: Thm 4.5's decoder of seed 002, the
hidden-state norms, non-collinearity, backward rows and stability lemmas of seed 004 (Lemma B.1, C.1, D.1, App. E,
F), and the empirical NTK of seed 003 against its limit (Prop. 2); every measurement a pure function of the
initialization and a few input sequences, vmapped over seeds (studies/random_init.py decides the checks), and the
study's figure (:func:`figure`).

Functions that take ``args`` read the study's options from it (widths, lengths, seeds, sequences, ε_x, …)."""

from __future__ import annotations

import math
import time

import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow.analysis import empirical_ntk

PERTURBATION_DELTA = 1.0  # Δ of ‖W'‖₂ = Δ/√m (ours; App. F allows any Δ ∈ [ϱ^−100, ϱ^100])
RERANDOMIZED_SHARES = (1 / 256, 1 / 128, 1 / 64, 1 / 32, 1 / 16)  # N/m of 004-P15 (ours; App. E needs N ≪ m)


def unfrozen(x):
    """The array behind a model leaf: ``x.value`` for a :class:`gflow.models.Frozen` array, ``x`` itself otherwise."""
    return x.value if isinstance(x, gflow.models.Frozen) else x


def decoder_matrix(W, A, patterns):
    """W̄^[L] of seed 002 Thm 4.5: W̄^[1] = D_1 A, W̄^[l] = [D_l W W̄^[l−1], D_l A]_r, with D_l = diag(patterns[l−1]).
    Shape (m, L·d); column block l−1 multiplies x_l. ``patterns`` (L, m); all ones gives the linear RNN's map."""
    M = patterns[0][:, None] * A
    for l in range(1, patterns.shape[0]):
        M = patterns[l][:, None] * jnp.concatenate([W @ M, A], axis=1)
    return M


def naive_decoder_matrix(W, A, length: int):
    """The naive construction of Thm 4.5: W̄^[1] = A, W̄^[l] = 2 [W W̄^[l−1], A]_r (no activation patterns)."""
    M = A
    for _ in range(1, length):
        M = 2.0 * jnp.concatenate([W @ M, A], axis=1)
    return M


def patterns_of(model, x):
    """D_l = 1[g_l ≥ 0] (the papers' convention σ'(0) = 1), shape (L, m), as floats."""
    return (model.preactivations(x) >= 0).astype(jnp.float64)


def transpose_error(M, X, h):
    """‖X − Mᵀ h‖_∞ over all L·d coordinates (Thm 4.5's metric) for one sequence X (L, d)."""
    return jnp.max(jnp.abs(X.reshape(-1) - M.T @ h))


def middle_token_error(X_hat, X, eps_x):
    """max_{l = 2 … L−1} ‖X̂_l[:d−1]/ε_x − x̄_l‖ (‖x̄_l‖ = 1): relative recovery error of the true tokens."""
    L, d = X.shape
    X_hat = X_hat.reshape(L, d)
    return jnp.max(jnp.linalg.norm(X_hat[1:-1, :-1] / eps_x - X[1:-1, :-1] / eps_x, axis=-1))


def decoding_errors(M0, Mn, pinv, X, hL, eps_x):
    """Part A on sequences X (n, L, d) with final states hL (n, m), means over the sequences: the Thm 4.5 decoder's
    ‖X − M0ᵀh‖_∞, its middle-token error relative to ε_x, the naive decoder's ‖X − Mnᵀh‖_∞, and least squares
    X̂ = M0⁺h on the past true tokens."""
    p1 = jax.vmap(transpose_error, (None, 0, 0))(M0, X, hL)
    p1_middle = jax.vmap(middle_token_error, (0, 0, None))(hL @ M0, X, eps_x)
    naive = jax.vmap(transpose_error, (None, 0, 0))(Mn, X, hL)
    p2 = jax.vmap(middle_token_error, (0, 0, None))(hL @ pinv.T, X, eps_x)
    return jnp.mean(p1), jnp.mean(p1_middle), jnp.mean(naive), jnp.mean(p2)


def norm_ratio(H):
    """max_l ‖h_l‖ / min_l ‖h_l‖ over l = 1 … L for hidden states H (L, m)."""
    n = jnp.linalg.norm(H, axis=-1)
    return jnp.max(n) / jnp.min(n)


def non_collinearity(H):
    """Lemma B.1 (done1k): min over 1 ≤ l < l' ≤ L−1 of ‖(I − ĥ_l ĥ_lᵀ) h_{l'}‖ with ĥ_l = h_l/‖h_l‖, for the hidden
    states H (L, m) of the null sequence; and the smallest singular value of [ĥ_1 … ĥ_{L−1}] (a stronger measure)."""
    Hs = H[:-1]
    unit = Hs / jnp.linalg.norm(Hs, axis=-1, keepdims=True)
    proj = unit @ Hs.T  # (l, l'): ĥ_l · h_{l'}
    sq = jnp.sum(Hs**2, axis=-1)[None, :] - proj**2
    k = Hs.shape[0]
    upper = np.triu(np.ones((k, k), dtype=bool), 1)
    dist = jnp.sqrt(jnp.maximum(sq, 0.0))
    return jnp.min(jnp.where(upper, dist, jnp.inf)), jnp.linalg.svd(unit, compute_uv=False)[-1]


def backward_rows(W, B, patterns):
    """The rows u ᵀBack_{i→j} (u = 1, scalar output) for 1 ≤ i ≤ j ≤ L, with Back_{j→j} = B and
    Back_{i→j} = Back_{i+1→j} D_{i+1} W (seed 002 §3.1). Returns (R, lengths, ends): R of
    shape (L, L, m) with R[k, j−1] = uᵀBack_{j−k→j} (valid where j − k ≥ 1), its lengths k and ends j."""
    L = patterns.shape[0]
    rows = [jnp.broadcast_to(B, (L, B.shape[0]))]
    js = np.arange(1, L + 1)
    for k in range(1, L):
        # Back_{j−k→j} = Back_{j−k+1→j} D_{j−k+1} W: pattern of step j − k + 1 (row index j − k)
        D = patterns[np.clip(js - k, 0, L - 1)]
        rows.append((rows[-1] * D) @ W)
    lengths = np.repeat(np.arange(L)[:, None], L, axis=1)
    ends = np.repeat(js[None, :], L, axis=0)
    return jnp.stack(rows), lengths, ends


def backward_correlations(W, B, patterns):
    """Mean |cos| between rows uᵀBack_{i→j} of different lengths j − i (Lemma C.1's pairs), its max, and the mean
    |cos| between distinct rows of equal length (not covered by the lemma)."""
    R, lengths, ends = backward_rows(W, B, patterns)
    valid = (ends - lengths >= 1).ravel()
    V = R.reshape(-1, R.shape[-1])[valid]
    k = lengths.ravel()[valid]
    U = V / jnp.linalg.norm(V, axis=-1, keepdims=True)
    C = jnp.abs(U @ U.T)
    different = k[:, None] != k[None, :]
    same = (k[:, None] == k[None, :]) & ~np.eye(k.size, dtype=bool)
    mean = lambda mask: jnp.sum(jnp.where(mask, C, 0.0)) / float(mask.sum())  # noqa: E731
    return mean(different), jnp.max(jnp.where(different, C, 0.0)), mean(same)


def backward_identity_error(model, x):
    """Sanity: ∂(B h_j)/∂x_i = uᵀBack_{i→j} D_i A for i ≤ j (autodiff through the model vs the recursion), relative."""
    W, A, B = (jnp.asarray(unfrozen(v)) for v in (model.W, model.A, model.B))
    D = patterns_of(model, x)
    R, lengths, ends = backward_rows(W, B, D)
    J = jax.jacfwd(lambda z: model.hidden_states(z) @ B)(x)  # (L, L, d): ∂(B h_j)/∂x_i
    L = x.shape[0]
    err, scale = 0.0, 0.0
    for k in range(L):
        for j in range(k + 1, L + 1):
            i = j - k
            pred = (R[k, j - 1] * D[i - 1]) @ A
            err = max(err, float(jnp.max(jnp.abs(pred - J[j - 1, i - 1]))))
            scale = max(scale, float(jnp.max(jnp.abs(J[j - 1, i - 1]))))
    return err / scale


def spectral_perturbation(key, m: int, delta: float):
    """A random W' with ‖W'‖₂ = Δ/√m exactly (App. F's premise ‖W'‖₂ ≤ Δ/√m, with equality): Δ/√m times a random
    signed permutation matrix, which is orthogonal (every singular value is Δ/√m) and costs O(m²)."""
    k_perm, k_sign = jax.random.split(key)
    signs = jax.random.rademacher(k_sign, (m,), dtype=jnp.float64)
    return jnp.zeros((m, m)).at[jnp.arange(m), jax.random.permutation(k_perm, m)].set(signs * (delta / math.sqrt(m)))


def backward_stability(W, W_new, B, patterns, patterns_new):
    """App. F (backward stability): ‖Back'_{i→j}‖ / ‖Back_{i→j}‖ over 1 ≤ i < j ≤ L, where Back' =
    Back(W_new, D') − Back(W, D) with each run's own patterns (Back_{j→j} = B does not move); scalar output, so the
    norms are lengths of rows. Returns the maximum and the median over the pairs."""
    R, lengths, ends = backward_rows(W, B, patterns)
    R_new = backward_rows(W_new, B, patterns_new)[0]
    moving = (lengths >= 1) & (ends - lengths >= 1)
    ratio = (jnp.linalg.norm(R_new - R, axis=-1) / jnp.linalg.norm(R, axis=-1))[moving]
    return jnp.max(ratio), jnp.median(ratio)


def product_gaps(length: int):
    """The gaps k = j − i of 004-P7: about 8 integers spaced geometrically in 1 … L − 1 (the fit is in ln k)."""
    return tuple(int(k) for k in np.unique(np.round(np.geomspace(1, length - 1, 8))))


def product_norms(W, patterns, gaps):
    """Lemma B.1 (done1i): ‖D_{1+k} W ⋯ D_2 W‖₂ (i = 1, j = 1 + k) for k in ``gaps``, exactly: the
    largest singular value of the explicit product, built one factor D_l W at a time (D_l = diag(patterns[l − 1]))."""
    P, norms = patterns[1][:, None] * W, []
    for k in range(1, max(gaps) + 1):
        if k > 1:
            P = patterns[k][:, None] * (W @ P)
        if k in gaps:
            norms.append(jnp.linalg.svd(P, compute_uv=False)[0])
    return jnp.stack(norms)


def state_distance(H, H_ref):
    """max_l ‖h_l − h'_l‖ over the steps of hidden states H (…, L, m) and H_ref (…, L, m): Lemma D.1's
    ‖h_i(x) − h_i(x^(0))‖ and App. E's shift after re-randomization (P15)."""
    return jnp.max(jnp.linalg.norm(H - H_ref, axis=-1), axis=-1)


def rerandomized_counts(m: int):
    """App. E's |𝒩| = N for width m: N/m ≈ ``RERANDOMIZED_SHARES``, at least one row."""
    return tuple(max(1, round(m * share)) for share in RERANDOMIZED_SHARES)


def nested_rows(key, m: int, counts):
    """App. E's fixed row sets 𝒩 of sizes ``counts``, nested: the first N entries of one random permutation of the m
    rows, as boolean masks (len(counts), m)."""
    rank = jnp.zeros(m, dtype=int).at[jax.random.permutation(key, m)].set(jnp.arange(m))
    return rank[None, :] < jnp.asarray(counts)[:, None]


def rerandomize(W, A, W_fresh, A_fresh, rows):
    """App. E: [W, A] with the rows in 𝒩 (boolean mask ``rows``, (m,)) replaced by fresh ones, both matrices alike."""
    return jnp.where(rows[:, None], W_fresh, W), jnp.where(rows[:, None], A_fresh, A)


def stability_measures(model, X, H, key):
    """Part D at one width, on sequences X (n, L, d) with hidden states H (n, L, m): 004-P4's backward-stability
    ratios (max, median over pairs) under W' = ``spectral_perturbation`` (Δ = ``PERTURBATION_DELTA``) on the first
    sequence, and 004-P15's shifts (mean over sequences of max_l ‖h̃_l − h_l‖) for N = ``rerandomized_counts(m)``."""
    W, A, B = (unfrozen(v) for v in (model.W, model.A, model.B))
    m = W.shape[0]
    k_pert, k_rows, k_fresh = jax.random.split(key, 3)
    W_new = W + spectral_perturbation(k_pert, m, PERTURBATION_DELTA)
    ratio_max, ratio_median = backward_stability(W, W_new, B, patterns_of(model, X[0]),
                                                 patterns_of(gflow.models.ElmanRNN(W_new, A, B), X[0]))
    fresh = gflow.models.elman_allen_zhu_li(k_fresh, m, A.shape[1])  # the rows' new draws, from the same init
    shifts = []
    for rows in nested_rows(k_rows, m, rerandomized_counts(m)):
        W_r, A_r = rerandomize(W, A, unfrozen(fresh.W), unfrozen(fresh.A), rows)
        shifts.append(jnp.mean(state_distance(jax.vmap(gflow.models.ElmanRNN(W_r, A_r, B).hidden_states)(X), H)))
    return {"back_ratio": ratio_max, "back_ratio_median": ratio_median, "rerandomized": jnp.stack(shifts)}


def width_measures(args, m: int, with_identities: bool):
    """A function of a seed key: every per-seed quantity of parts A, B and D (but P7) at width m (arrays over
    lengths, ε_x)."""
    d, n, lengths, eps_xs = args.d, args.sequences, args.lengths, args.eps_xs

    def one_seed(key):
        k_model, k_data = jax.random.split(key)
        k_m = jax.random.fold_in(k_model, m)
        model = gflow.models.elman_panigrahi_goyal(k_m, m, d)  # seed 002's Elman RNN
        model4 = gflow.models.elman_allen_zhu_li(k_m, m, d)  # seed 004's: the same W, A; B ~ N(0, 1)
        W, A = (unfrozen(v) for v in (model.W, model.A))
        hidden = jax.vmap(model.hidden_states)
        out = {name: [] for name in ("p1", "p1_middle", "naive", "p2", "ratio", "norm_min", "norm_max",
                                     "noncollinear", "sigma_min", "identity", "drop")}
        for L in lengths:
            k_L = jax.random.fold_in(k_data, L)
            null = gflow.objectives.null_sequence(L, d)
            D0 = patterns_of(model, null)
            M0 = decoder_matrix(W, A, D0)
            Mn = naive_decoder_matrix(W, A, L)
            pinv = jnp.linalg.pinv(M0)
            # the sequences at every ε_x of part A, then at seed 004's ε_x = 1/L: the same true tokens, scaled
            scales = jnp.asarray(eps_xs + [1.0 / L])
            middle = jnp.zeros(L).at[1:-1].set(1.0)
            X1 = gflow.objectives.normalized_token_sequences(k_L, n, L, d, eps_x=1.0)
            Xs = X1[None] * (1.0 + (scales[:, None] - 1.0) * middle[None, :])[:, None, :, None]  # (E + 1, n, L, d)
            H = jax.vmap(hidden)(Xs)  # (E + 1, n, L, m); seeds 002 and 004 share W and A
            E = len(eps_xs)
            errors = jax.vmap(decoding_errors, (None, None, None, 0, 0, 0))(M0, Mn, pinv, Xs[:E], H[:E, :, -1],
                                                                             scales[:E])
            for name, values in zip(("p1", "p1_middle", "naive", "p2"), errors):
                out[name].append(values)
            if with_identities:  # sanity: with the sequence's own patterns, h^(L) = W̄_D X exactly
                X = Xs[0, 0]
                MD = decoder_matrix(W, A, patterns_of(model, X))
                hL = H[0, 0, -1]
                out["identity"].append(jnp.max(jnp.abs(MD @ X.reshape(-1) - hL)) / jnp.max(jnp.abs(hL)))
            H4 = H[-1]
            norms = jnp.linalg.norm(H4, axis=-1)
            out["ratio"].append(jnp.max(jax.vmap(norm_ratio)(H4)))
            out["norm_min"].append(jnp.min(norms))
            out["norm_max"].append(jnp.max(norms))
            H0 = model4.hidden_states(null)
            nc, smin = non_collinearity(H0)
            out["noncollinear"].append(nc)
            out["sigma_min"].append(smin)
            out["drop"].append(jnp.mean(state_distance(H, H0), axis=1))  # Lemma D.1 at every ε_x, (E + 1,)
        out = {k: jnp.stack(v) for k, v in out.items() if v}
        # seed 004 Lemma C.1 at the largest length, on its first sequence at ε_x = 1/L (the loop's last Xs)
        B, x = unfrozen(model4.B), Xs[-1, 0]
        out["corr_different"], out["corr_max"], out["corr_same"] = backward_correlations(W, B, patterns_of(model4, x))
        # part D at the largest length and ε_x = 1/L; its own key stream, so the draws above do not change
        out.update(stability_measures(model4, Xs[-1], H[-1], jax.random.fold_in(k_m, 1)))
        return out

    return one_seed


def seed_batch(m: int, seeds: int) -> int:
    """Seeds per vmapped batch at width m: about 2^24 matrix entries (128 MiB per W) at a time."""
    return max(1, min(seeds, 2**24 // (m * m)))


def seed_keys(seeds, stream: int):
    """One key per seed for the random stream ``stream`` (the same seeds in every part): seed s folds s into the
    stream's key. ``seeds``: a count n (seeds 0 … n − 1) or the seeds themselves (a study's seed block)."""
    seeds = np.arange(seeds) if np.ndim(seeds) == 0 else np.asarray(seeds)
    return jax.vmap(lambda s: jax.random.fold_in(jax.random.key(stream), s))(jnp.asarray(seeds))


def _seeds(args):
    """The run's seeds: its seed block's (``args.block_seeds``) where the study has blocks, else 0 … seeds − 1."""
    return getattr(args, "block_seeds", None) or args.seeds


def run_widths(args):
    """Parts A, B and D (but P7): per width, every per-seed quantity (numpy arrays with a leading seed axis)."""
    keys = seed_keys(_seeds(args), 2)
    per_width = {}
    for m in args.widths:
        started = time.perf_counter()
        f = jax.jit(width_measures(args, m, with_identities=m == args.widths[0]))
        per_width[m] = {k: np.asarray(v) for k, v in
                        jax.lax.map(f, keys, batch_size=seed_batch(m, args.seeds)).items()}
        r = per_width[m]
        print(f"  m = {m:5d}: P1 err {np.median(r['p1'][:, -1, 0]):.3g}, P2 err {np.median(r['p2'][:, -1, 0]):.3g}, "
              f"naive {np.median(r['naive'][:, -1, 0]):.3g} (L = {args.lengths[-1]}); ratio "
              f"{np.median(r['ratio'][:, -1]):.3g}, non-collinearity {np.median(r['noncollinear'][:, -1]):.3g}, "
              f"|cos| {np.median(r['corr_different']):.3g}; Back' ratio {np.median(r['back_ratio']):.3g}, "
              f"re-randomized shift {np.median(r['rerandomized'][:, -1]):.3g} ({time.perf_counter() - started:.1f} s)",
              flush=True)
    return per_width


def run_products(args):
    """Part D, 004-P7: per seed, the norms ‖D_{1+k} W ⋯ D_2 W‖₂ over ``product_gaps`` and ‖W‖₂, at width
    ``--product-width`` on one normalized sequence of length ``--product-length`` (ε_x = 1/L)."""
    m, L, d, gaps = args.product_width, args.product_length, args.d, product_gaps(args.product_length)

    def one_seed(key):
        k_model, k_data = jax.random.split(key)
        model = gflow.models.elman_allen_zhu_li(k_model, m, d)
        x = gflow.objectives.normalized_token_sequences(k_data, 1, L, d, eps_x=1.0 / L)[0]
        W = unfrozen(model.W)
        return product_norms(W, patterns_of(model, x), gaps), jnp.linalg.svd(W, compute_uv=False)[0]

    started = time.perf_counter()
    norms, w_norm = jax.lax.map(jax.jit(one_seed), seed_keys(_seeds(args), 7), batch_size=seed_batch(m, args.seeds))
    norms, w_norm = np.asarray(norms), np.asarray(w_norm)
    print(f"  products m = {m}, L = {L}: median ‖D W ⋯ D W‖₂ {np.median(norms[:, 0]):.3g} (gap 1) … "
          f"{np.median(norms[:, -1]):.3g} (gap {gaps[-1]}), ‖W‖₂ {np.median(w_norm):.3g} "
          f"({time.perf_counter() - started:.1f} s)", flush=True)
    return {"gaps": gaps, "norms": norms, "w_norm": w_norm}


def proposition2_features(w, u, X, sigma):
    """Per-neuron NTK features f_t = (∂H_t/∂w, ∂H_t/∂u) ∈ ℝ^{1+d}, t = 1 … T, written out as the sums of seed 003
    Prop. 2 (sums from k = 0): ∂H_t/∂w = Σ_{k=0}^{t−1} w^k h_{t−k−1} Π_{s=0}^{k} I_{t−s−1},
    ∂H_t/∂u = Σ_k w^k X_{t−k−1} Π_s I_{t−s−1}, with h_0 = 0, h_{j+1} = σ(w h_j + uᵀX_j), I_j = σ'(w h_j + uᵀX_j).

    ``w`` (M,), ``u`` (M, d), ``X`` (N, T, d); returns (T, M, N, 1 + d). κ_t(X, X') = E f_t(X)·f_t(X')."""
    drive = jnp.einsum("md,ntd->tmn", u, X)  # uᵀX_j, (T, M, N)
    T = X.shape[1]
    h, I = [jnp.zeros(drive.shape[1:])], []
    slope = jax.vmap(jax.grad(sigma))
    for j in range(T):
        g = w[:, None] * h[-1] + drive[j]
        h.append(sigma(g))
        I.append(slope(g.ravel()).reshape(g.shape))
    feats = []
    for t in range(1, T + 1):
        dw, du, prod = 0.0, 0.0, 1.0
        for k in range(t):
            prod = prod * I[t - k - 1]
            coef = (w[:, None] ** k) * prod  # (M, N)
            dw = dw + coef * h[t - k - 1]
            du = du + coef[..., None] * X[None, :, t - k - 1, :]
        feats.append(jnp.concatenate([dw[..., None], du], axis=-1))
    return jnp.stack(feats)


def limit_kernel(args, X):
    """κ_t(X, X') of Prop. 2 by Monte Carlo: u0 ~ N(0, I_d) draws (``ntk_reference``/2), each with both w0 = ±α
    (the Rad_α expectation exactly). Returns (κ (T, N, N), its Monte-Carlo standard error (T, N, N))."""
    sigma = gflow.models.ACTIVATIONS[args.activation].fn
    draws, chunk = args.ntk_reference // 2, min(args.ntk_reference // 2, 2**14)
    key = jax.random.key(3)

    @jax.jit
    def moments(k):
        u = jax.random.normal(k, (chunk, args.ntk_d), dtype=jnp.float64)
        g = 0.0
        for sign in (1.0, -1.0):
            f = proposition2_features(jnp.full((chunk,), sign * args.alpha), u, X, sigma)
            g = g + 0.5 * jnp.einsum("tmap,tmbp->tmab", f, f)
        return jnp.sum(g, axis=1), jnp.sum(g**2, axis=1)

    s1, s2 = 0.0, 0.0
    for c in range(draws // chunk):
        a, b = moments(jax.random.fold_in(key, c))
        s1, s2 = s1 + a, s2 + b
    n = (draws // chunk) * chunk
    mean = s1 / n
    var = jnp.maximum(s2 / n - mean**2, 0.0)
    return np.asarray(mean), np.asarray(jnp.sqrt(var / n))


def ntk_model(args, key, m):
    """Part C's model: seed 003's diagonal tanh RNN with the symmetric initialization of Def. 1 at width ``m``."""
    return gflow.models.elman_cayci_eryilmaz(key, m, args.ntk_d, alpha=args.alpha, activation=args.activation)


def ntk_identity_error(args, X, m):
    """Sanity: gflow's empirical NTK (autodiff over θ = (W_ii, U)) equals (1/m) Σ_i f_i(X)·f_i(X') with the
    Prop. 2 features of each neuron (c_i² = 1), at width m, seed 0: max relative difference."""
    model = ntk_model(args, jax.random.fold_in(jax.random.key(4), 0), m)
    K = empirical_ntk(model, X)
    w, u = model.W, model.A
    f = proposition2_features(w, u, X, gflow.models.ACTIVATIONS[args.activation].fn)
    K2 = jnp.einsum("tmap,tmbp->tab", f, f) / m
    return float(jnp.max(jnp.abs(K - K2)) / jnp.max(jnp.abs(K)))


def run_ntk(args):
    """Part C: per width, the per-seed relative deviation ‖K^(m) − κ‖_F / ‖κ‖_F; the reference κ and its error."""
    X = gflow.objectives.unit_ball_sequences(jax.random.key(5), args.ntk_sequences, args.ntk_length, args.ntk_d)
    started = time.perf_counter()
    kappa, se = limit_kernel(args, X)
    print(f"  κ_t reference from {args.ntk_reference} neurons ({time.perf_counter() - started:.1f} s)", flush=True)
    keys = seed_keys(_seeds(args), 4)
    norm = np.linalg.norm(kappa)
    dev = {}
    for m in args.ntk_widths:
        started = time.perf_counter()
        f = jax.jit(lambda k, m=m: jnp.linalg.norm(empirical_ntk(ntk_model(args, k, m), X) - kappa))
        dev[m] = np.asarray(jax.lax.map(f, keys, batch_size=max(1, min(args.seeds, 2**15 // m)))) / norm
        print(f"  NTK m = {m:6d}: median deviation {np.median(dev[m]):.3g} ({time.perf_counter() - started:.1f} s)",
              flush=True)
    identity = ntk_identity_error(args, X, args.ntk_widths[0])
    return {"deviation": dev, "kappa": kappa, "reference_error": float(np.linalg.norm(se) / norm),
            "identity": identity}


def fit_grid(widths, lengths, values):
    """Per seed, least squares ln v = a + p ln m + q ln L over the grid: values (S, n_m, n_L) → (p, q), each (S,)."""
    mm, LL = np.meshgrid(np.log(widths), np.log(lengths), indexing="ij")
    X = np.column_stack([np.ones(mm.size), mm.ravel(), LL.ravel()])
    coef = np.linalg.lstsq(X, np.log(values.reshape(values.shape[0], -1)).T, rcond=None)[0]
    return coef[1], coef[2]


def fit_rate_in_length(widths, lengths, values):
    """Per seed, least squares ln v = a + b ln m + r L: the exponential rate r per step of L, (S,)."""
    mm, LL = np.meshgrid(np.log(widths), np.asarray(lengths, float), indexing="ij")
    X = np.column_stack([np.ones(mm.size), mm.ravel(), LL.ravel()])
    return np.linalg.lstsq(X, np.log(values.reshape(values.shape[0], -1)).T, rcond=None)[0][2]


def fit_exponent(xs, values):
    """Per seed, the slope of ln v against ln x: values (S, n_x) → (S,)."""
    return np.polyfit(np.log(np.asarray(xs, float)), np.log(values).T, 1)[0]


def stack(per_width, key):
    """(S, n_m, …) array of ``key`` over widths."""
    return np.stack([per_width[m][key] for m in sorted(per_width)], axis=1)


def perturbation_norm_error(m: int) -> float:
    """Sanity: every singular value of ``spectral_perturbation`` equals Δ/√m (max relative difference)."""
    sv = jnp.linalg.svd(spectral_perturbation(jax.random.key(8), m, PERTURBATION_DELTA), compute_uv=False)
    target = PERTURBATION_DELTA / math.sqrt(m)
    return float(jnp.max(jnp.abs(sv - target)) / target)


def figure(args, results, norm_band, backward_rate, product_power):
    """Draw random_init.png: medians over seeds against the width m of the random-initialization claims of seeds
    002, 003 and 004 — the Thm 4.5 decoder's error and the least-squares reading of past tokens (002-P1, P2; seed 002
    Fig. 4), the kernel's distance to its limit κ (003-P7), the hidden-norm ratio and band (004-P8, Lemma B.1), the
    null-sequence non-collinearity (004-P11) and the backward correlations (004-P9, Lemma C.1); its last row is
    :func:`stability_panels`.

    Args:
        args: the study's options (``widths``, ``lengths``, ``eps_x``, ``eps_xs``, ``seeds``).
        results: the study's results (``002``, ``003``, ``004``, ``004_stability``).
        norm_band: Lemma B.1's band [0.9, 2] of ‖h_l‖ (its ratio 2/0.9 is 004-P8's threshold).
        backward_rate: 004-P4's exponent in m (the study's threshold), drawn as a guide.
        product_power: 004-P7's power in the gap (the study's threshold), drawn as a guide.

    Returns:
        The matplotlib figure (3 × 4 panels).
    """
    from gflow.plot import figure_grid

    fig, axes = figure_grid(3, 4, panel=(5.25, 14 / 3))
    ms = np.asarray(args.widths, float)
    r2, r4, r3 = results["002"], results["004"], results["003"]
    main = r2["median_over_seeds"][f"{args.eps_x:g}"]
    for i, L in enumerate(args.lengths):
        c = f"C{i}"
        axes[0, 0].plot(ms, main["p1"][:, i], "o-", color=c, label=f"L = {L}")
        axes[0, 1].plot(ms, main["p2"][:, i], "o-", color=c, label=f"L = {L}")
        axes[0, 2].plot(ms, main["naive"][:, i], "s--", color=c, label=f"naive, L = {L}")
        axes[1, 0].plot(ms, r4["norm_ratio_median"][:, i], "o-", color=c, label=f"L = {L}")
        axes[1, 0].axhline(r4["infinite_width_ratio"][i], color=c, lw=0.8, ls=":")
        axes[1, 1].plot(ms, r4["noncollinearity_median"][:, i], "o-", color=c, label=f"L = {L}")
    for e, marker in zip(args.eps_xs[1:], "x+*dv^"):
        t = r2["median_over_seeds"][f"{e:g}"]
        axes[0, 1].plot(ms, t["p2"][:, -1], marker + ":", color="gray", label=f"ε_x = {e:g}, L = {args.lengths[-1]}")
        axes[0, 0].plot(ms, t["p1"][:, -1], marker + ":", color="gray", label=f"ε_x = {e:g}, L = {args.lengths[-1]}")
    axes[0, 2].plot(ms, main["p1"][:, -1], "o-", color="k", label=f"Thm 4.5 decoder, L = {args.lengths[-1]}")
    axes[1, 0].axhline(norm_band[1] / norm_band[0], color="r", lw=1, label="2/0.9 (Lemma B.1)")
    axes[1, 2].plot(ms, r4["corr_different_median"], "o-", label="different lengths (Lemma C.1)")
    axes[1, 2].plot(ms, r4["corr_same_length_median"], "s--", label="equal lengths (not covered)")
    axes[1, 2].plot(ms, r4["corr_different_median"][0] * (ms / ms[0]) ** -0.25, ":", color="gray", label="m^(−1/4)")
    nm = np.asarray(r3["widths"], float)
    for s in range(r3["deviation"].shape[0]):
        axes[0, 3].plot(nm, r3["deviation"][s], ".", color="C3", alpha=0.3)
    axes[0, 3].plot(nm, r3["deviation_median"], "o-", color="C3", label="median over seeds")
    axes[0, 3].plot(nm, r3["deviation_median"][0] * (nm / nm[0]) ** -0.5, ":", color="gray", label="m^(−1/2)")
    axes[1, 3].plot(ms, r4["norm_min"][:, -1], "v-", label=f"min ‖h_l‖, L = {args.lengths[-1]}")
    axes[1, 3].plot(ms, r4["norm_max"][:, -1], "^-", label=f"max ‖h_l‖, L = {args.lengths[-1]}")
    for b in norm_band:
        axes[1, 3].axhline(b, color="r", lw=0.8, ls=":")
    titles = [["002-P1: ‖X − W̄ᵀh^(L)‖_∞ (Thm 4.5; seed 002 Fig. 4)", "002-P2: least-squares, past tokens (relative)",
               "002-P1: naive 2[W W̄, A] vs Thm 4.5", "003-P7: ‖K^(m) − κ‖_F / ‖κ‖_F"],
              ["004-P8: max_l‖h_l‖ / min_l‖h_l‖ (ε_x = 1/L; dotted: m → ∞)", "004-P11: min ‖(I − ĥĥᵀ)h'‖ (null seq.)",
               f"004-P9: mean |cos| of uᵀBack rows (L = {args.lengths[-1]})",
               "004-P8: extreme ‖h_l‖ over seeds, sequences, l (band [0.9, 2])"]]
    for (i, j), ax in np.ndenumerate(axes[:2]):
        ax.set_xscale("log", base=2)
        ax.set(yscale="linear" if (i, j) == (1, 3) else "log", xlabel="width m")
        ax.set_title(titles[i][j], fontsize=9)
        ax.legend(fontsize=7)
    stability_panels(args, results["004_stability"], axes[2], backward_rate, product_power)
    return fig


def stability_panels(args, r, axes, backward_rate, product_power):
    """Draw the last row of :func:`figure`, the stability claims of seed 004 (medians over seeds): the backward
    ratio ‖Back'‖/‖Back‖ under a spectral perturbation against m (004-P4), the norms of products D W ⋯ D W against
    the gap (004-P7), the hidden-state drop against ε_x (004-P10), and the shift of the hidden states when N rows of
    [W, A] are re-drawn (004-P15).

    Args:
        args: the study's options (``widths``, ``lengths``).
        r: the results of part D (``004_stability``).
        axes: the row's four axes.
        backward_rate: 004-P4's exponent in m, drawn as a guide.
        product_power: 004-P7's power in the gap, drawn as a guide.
    """
    ms = np.asarray(args.widths, float)
    axes[0].plot(ms, r["back_ratio_max_median"], "o-", label="max over (i, j)")
    axes[0].plot(ms, r["back_ratio_median_median"], "s--", label="median over (i, j)")
    axes[0].plot(ms, r["back_ratio_max_median"][0] * (ms / ms[0]) ** backward_rate, ":", color="gray",
                 label="m^(−1/6)")
    gaps = np.asarray(r["gaps"], float)
    axes[1].plot(gaps, r["product_norm_median"], "o-", label=f"‖D W ⋯ D W‖₂, m = {r['product_width']}")
    axes[1].plot(gaps, r["w_norm_power_median"], "s--", color="C3", label="‖W‖₂^(j−i)")
    axes[1].plot(gaps, r["product_norm_median"][0] * gaps**product_power, ":", color="gray", label="(j − i)³")
    drop = r["drop_median"][-1]  # (n_L, E + 1) at the largest m; the last ε_x is 1/L
    for i, L in enumerate(args.lengths):
        eps = np.asarray(r["drop_eps_x"][i])
        order = np.argsort(eps)
        axes[2].plot(eps[order], drop[i, order], "o-", color=f"C{i}", label=f"L = {L}")
    axes[2].plot(eps[order], drop[-1, order][0] * eps[order] / eps[order][0], ":", color="gray", label="∝ ε_x")
    for i, m in enumerate(args.widths):
        share = np.asarray(r["rerandomized_counts"][m], float) / m
        axes[3].plot(share, r["rerandomized_shift_median"][i], "o-", color=f"C{i}", label=f"m = {m}")
    axes[3].plot(share, r["rerandomized_shift_median"][-1][0] * np.sqrt(share / share[0]), ":", color="gray",
                 label="√(N/m)")
    for ax, title, xlabel in zip(axes, (
            f"004-P4: ‖Back'‖/‖Back‖, ‖W'‖₂ = {PERTURBATION_DELTA:g}/√m (L = {args.lengths[-1]})",
            f"004-P7: spectral norms of products (L = {r['product_length']})",
            f"004-P10: max_i ‖h_i(x) − h_i(x^(0))‖ (m = {args.widths[-1]})",
            f"004-P15: max_l ‖h̃_l − h_l‖, N rows of [W, A] re-drawn (L = {args.lengths[-1]})"),
            ("width m", "gap j − i", "ε_x", "N/m")):
        ax.set_xscale("log", base=2)
        ax.set(yscale="log", xlabel=xlabel)
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
