"""Seed 003's problem (Cayci & Eryilmaz): the diagonal-W Elman RNN of §1 with the symmetric initialization of Def. 1,
the transport teacher of eq. (8), projected GD of §3(b) with Theorem 1's step size, the transported point Θ̄ of
Prop. 3's proof and Remark 4, the Lyapunov bound of Theorem 1's proof in its gradient-flow limit, and the identities
(Def. 1, Prop. 1) and gradient maxima (Lemma 1) that studies/memory_cutoff.py checks, and its figures
(:func:`figures`, :func:`transport_figure`).

Functions that take ``args`` read the study's options from it (``d``, ``m``, ``n``, ``rho``, ``nu``,
``activation``, ``teacher_samples``, ``quick``)."""

from __future__ import annotations

import math
import time
from functools import partial

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

import gflow
from gflow import analysis as an, GflowInputError
from gflow.objectives.nonlinear_teachers import transport_teacher

# P14: the flow runs to t₁ = P14_HORIZON ‖Θ(0) − Θ̄‖² / R_S(Θ(0)), where the bound's transient ‖Θ(0) − Θ̄‖²/(2t)
# has fallen to 1/(2 P14_HORIZON) = 1 % of R_S(Θ(0)); P14_SAVES log-spaced times (and t = 0) for the integral.
P14_HORIZON = 50.0
P14_SAVES = 400


def key(*ints):
    """A key from small integers (the same (seed, stream) always gives the same key)."""
    return jax.random.key(int(np.ravel_multi_index(ints, (1000,) * len(ints))) if len(ints) > 1 else ints[0])


def activations_of(args):
    """Parts A and B: the study's activation, and in full mode also the other C² activations."""
    others = [a for a in ("tanh", "logistic", "gaussian") if a != args.activation]
    return [args.activation] + ([] if args.quick else others)


def sampler(args, radius=1.0):
    """The input sampler: sequences uniform in the ball of ``radius`` in R^d (d = ``args.d``)."""
    return partial(gflow.objectives.unit_ball_sequences, d=args.d, radius=radius)


def student(args, alpha, seed, m=None):
    """Θ(0): the symmetric initialization of Def. 1 at width m (default --m)."""
    return gflow.models.elman_cayci_eryilmaz(key(seed, 3), m or args.m, args.d, alpha=alpha,
                                             activation=args.activation)


def problem(args, alpha, length, seed, *, n=None, samples=None):
    """(teacher, loss, model0) for one (α, T, seed): a transport teacher of the student's α with
    ``samples`` Monte-Carlo samples (default --teacher-samples; the maps v_w, v_u depend on the seed only) and
    ``n`` training sequences (default --n)."""
    teacher = transport_teacher(key(seed, 1), args.d, alpha=alpha, activation=args.activation,
                                n_samples=samples or args.teacher_samples, nu_w=args.nu, nu_u=args.nu)
    loss = gflow.objectives.SampleLoss.from_teacher(key(seed, 2), teacher, n or args.n, length, sampler=sampler(args))
    return teacher, loss, student(args, alpha, seed)


def transported_point(teacher, model0):
    """Θ̄ of Prop. 3's proof and Remark 4 (Theorem 1's reference point, eq. 20): W̄_ii = W_ii(0) + c_i v_w(W_ii(0))/√m,
    Ū_i = U_i(0) + c_i v_u(U_i(0))/√m, with the teacher's transport maps (v_w(±α) read off its samples; v_u must be
    the default constant map, the only one a TransportTeacher lets us evaluate off its samples)."""
    w0, v_u = np.asarray(teacher.network.W), np.asarray(teacher.v_u)
    if not (np.all(v_u == v_u[0]) and np.any(w0 > 0) and np.any(w0 < 0)):
        raise GflowInputError("transported_point needs a teacher with a constant v_u and samples at both ±α")
    v_plus, v_minus = float(teacher.v_w[np.argmax(w0 > 0)]), float(teacher.v_w[np.argmax(w0 < 0)])
    c, scale = model0.B.value, 1.0 / math.sqrt(model0.width)
    v_w = jnp.where(model0.W > 0, v_plus, v_minus)
    return eqx.tree_at(lambda mm: (mm.W, mm.A), model0,
                       (model0.W + scale * c * v_w, model0.A + scale * c[:, None] * jnp.asarray(v_u[0])[None]))


def squared_distance(model, other):
    """‖Θ − Θ'‖² over the trained parameters (Theorem 1's Lyapunov function at Θ' = Θ̄)."""
    return float(jnp.sum((gflow.models.flatten(model)[0] - gflow.models.flatten(other)[0]) ** 2))


def flow_bound_excess(ts, losses, r_bar, lyap0):
    """P14 along a flow saved at ``ts`` (ts[0] = 0): (1/t)∫₀ᵗ R ds − R(Θ̄) − ‖Θ(0) − Θ̄‖²/(2t) at ts[1:], and the
    ratio of the average to the bound. The integral is the trapezoid rule, which overestimates ∫R for a convex
    decreasing R (so it can only make the check harder)."""
    ts, losses = np.asarray(ts), np.asarray(losses)
    integral = np.cumsum(np.diff(ts) * (losses[1:] + losses[:-1]) / 2)
    average, bound = integral / ts[1:], r_bar + lyap0 / (2 * ts[1:])
    return average - bound, average / bound


def projection_of(args, model0):
    """Seed 003 §3(b): |W_ii − W_ii(0)| <= ρ_w/√m (a clip) and ‖U_i − U_i(0)‖ <= ρ_u/√m (per-row ball)."""
    r = args.rho / math.sqrt(args.m)
    return gflow.discrete.compose_projections(gflow.discrete.box_projection(model0, "W", r), gflow.discrete.ball_projection(model0, "A", r))


def neuron_moves(model, model0):
    """(max_i |W_ii − W_ii(0)|, max_i ‖U_i − U_i(0)‖): the per-neuron displacements §3(b) constrains."""
    return (float(jnp.max(jnp.abs(model.W - model0.W))),
            float(jnp.max(jnp.linalg.norm(model.A - model0.A, axis=1))))


def projected_gd(args, loss, model0, length, tau, label, **config):
    """Projected GD of §3(b) with Theorem 1's step η = 1/(T√τ) for τ steps, every iterate saved; ``config`` goes
    into the trajectory's configuration."""
    eta = 1.0 / (length * math.sqrt(tau))
    traj = gflow.discrete.run_projected_gd(loss, model0, lr=eta, steps=tau, projection=projection_of(args, model0),
                                           save_at=np.arange(tau + 1), progress=False,
                                           config={"study": "memory_cutoff", "run": label, "T": length, **config})
    if traj.status != "completed":
        raise RuntimeError(f"projected GD {label}: {traj.status} ({traj.message})")
    return traj


def constraint_excess(args, model0, traj):
    """max over saved iterates of (max_i |ΔW_ii| − r)₊, (max_i ‖ΔU_i‖ − r)₊, (‖W‖_{∞,∞} − α_m)₊, and the usage
    curves √m max_i |ΔW_ii| / ρ, √m max_i ‖ΔU_i‖ / ρ."""
    r = args.rho / math.sqrt(args.m)
    alpha_m = float(jnp.max(jnp.abs(model0.W))) + r
    moves = [neuron_moves(traj.model_at(i), model0) for i in range(len(traj.ts))]
    w_moves, u_moves = (np.asarray(v) for v in zip(*moves))
    w_norms = np.asarray([float(jnp.max(jnp.abs(traj.model_at(i).W))) for i in range(len(traj.ts))])
    excess = max(float(np.max(w_moves - r)), float(np.max(u_moves - r)), float(np.max(w_norms - alpha_m)), 0.0)
    return excess, w_moves / r, u_moves / r, w_norms


def averaged_loss(loss, traj, tau):
    """R_S at the averaged parameters Θ̄_τ = (1/τ) Σ_{s<τ} Θ(s) of Corollary 1 (every iterate saved)."""
    _, static, unravel = gflow.models.flatten(traj.final)
    return float(loss(gflow.models.unflatten(np.mean(traj.params[:tau], axis=0), static, unravel)))


def max_w_along(traj):
    """max over the saved iterates of ‖W‖_{∞,∞}."""
    return max(float(jnp.max(jnp.abs(traj.model_at(i).W))) for i in range(len(traj.ts)))


@eqx.filter_jit
def init_defects(model, loss):
    """(max |F_t(X; Θ)|, max_i |∇_{Θ_i} R + ∇_{Θ_{i+m/2}} R| / max |∇R|) on the loss's sequences."""
    m = model.width
    f = jnp.max(jnp.abs(jax.vmap(model)(loss.inputs)))
    g = eqx.filter_grad(loss)(model)
    theta = jnp.concatenate([g.W[:, None], g.A], axis=1)
    return f, jnp.max(jnp.abs(theta[: m // 2] + theta[m // 2:])) / jnp.max(jnp.abs(theta))


@eqx.filter_jit
def proposition_1_errors(model, loss):
    """(relative error of Prop. 1's ∂H/∂Θ_i vs autodiff, max off-diagonal |∂H⁽ʲ⁾/∂Θ_i|, relative error of the
    loss gradient chained through Prop. 1) on the first sequence / the whole loss."""
    x = loss.inputs[0]
    d_w, d_u = an.hidden_state_gradients(model, x)

    def states(W, A):
        return eqx.tree_at(lambda mm: (mm.W, mm.A), model, (W, A)).hidden_states(x)

    jac_w, jac_a = jax.jacrev(states, argnums=(0, 1))(model.W, model.A)  # (T, m, m), (T, m, m, d)
    diag_w, diag_a = jnp.einsum("tii->ti", jac_w), jnp.einsum("tiid->tid", jac_a)
    rel_h = jnp.maximum(jnp.max(jnp.abs(diag_w - d_w)) / jnp.max(jnp.abs(d_w)),
                        jnp.max(jnp.abs(diag_a - d_u)) / jnp.max(jnp.abs(d_u)))
    off = ~jnp.eye(model.width, dtype=bool)
    off_max = jnp.maximum(jnp.max(jnp.abs(jnp.where(off[None], jac_w, 0.0))),
                          jnp.max(jnp.abs(jnp.where(off[None, :, :, None], jac_a, 0.0))))
    gw, gu = an.sample_loss_gradient(model, loss)
    g = eqx.filter_grad(loss)(model)
    rel_l = jnp.maximum(jnp.max(jnp.abs(g.W - gw)) / jnp.max(jnp.abs(g.W)),
                        jnp.max(jnp.abs(g.A - gu)) / jnp.max(jnp.abs(g.A)))
    return rel_h, off_max, rel_l


@eqx.filter_jit
def gradient_maxima(model, x):
    """max over sequences and neurons of |∂H_t/∂W_ii|, ‖∂H_t/∂U_i‖ and ‖∂_{Θ_i} H_t‖, each of shape (T,)."""
    d_w, d_u = jax.vmap(lambda s: an.hidden_state_gradients(model, s))(x)  # (n, T, m), (n, T, m, d)
    du = jnp.linalg.norm(d_u, axis=-1)
    return (jnp.max(jnp.abs(d_w), axis=(0, 2)), jnp.max(du, axis=(0, 2)),
            jnp.max(jnp.sqrt(d_w**2 + du**2), axis=(0, 2)))


def p14_flow(args, loss, model0, bar, rtol=None):
    """P14: the plain gradient flow (diffrax) from Θ(0) to t₁ = P14_HORIZON ‖Θ(0) − Θ̄‖² / R_S(Θ(0)); returns the
    trajectory, its bound excess / R_S(Θ(0)) and ratio at every saved t > 0 (flow_bound_excess), and the scalars."""
    r0, r_bar, lyap0 = float(loss(model0)), float(loss(bar)), squared_distance(model0, bar)
    t1 = P14_HORIZON * lyap0 / r0
    ts = np.concatenate([[0.0], np.geomspace(1e-3 * t1, t1, P14_SAVES)])
    traj = gflow.solve_flow(loss, model0, t1, rtol=rtol, save_at=ts, progress=False,
                            config={"study": "memory_cutoff", "run": "P14 gradient flow"})
    if traj.status != "completed":
        raise RuntimeError(f"P14 gradient flow: {traj.status} ({traj.message})")
    excess, ratio = flow_bound_excess(traj.ts, traj.loss, r_bar, lyap0)
    return traj, excess / r0, ratio, {"R0": r0, "R_bar": r_bar, "lyapunov0": lyap0, "t1": t1}


def init_defect_cases(args) -> list[dict]:
    """Def. 1 at Θ(0): the output and the paired gradients, for each activation of :func:`activations_of` and α below
    and above 1/σ₁ (m = ``args.m``, 8 sequences of length 12).

    Args:
        args: the study's options (``d``, ``m``, ``activation``, ``quick``).

    Returns:
        One dict per case: activation, α, m, max |F_t(X; Θ(0))| and the paired-gradient defect (:func:`init_defects`).
    """
    cases = []
    for activation in activations_of(args):
        s1 = gflow.models.ACTIVATIONS[activation].sigma1
        for alpha in (0.5 / s1, 1.5 / s1):
            teacher = transport_teacher(key(7, 1), args.d, alpha=alpha, activation=activation, n_samples=256)
            loss = gflow.objectives.SampleLoss.from_teacher(key(7, 2), teacher, 8, 12, sampler=sampler(args))
            model = gflow.models.elman_cayci_eryilmaz(key(7, 3), args.m, args.d, alpha=alpha, activation=activation)
            f, pair = (float(v) for v in init_defects(model, loss))
            cases.append({"activation": activation, "alpha": alpha, "m": args.m, "max_abs_F": f, "pair_defect": pair})
    return cases


PROPOSITION_1_SIZE = (16, 12)  # width m and length T of the Prop. 1 comparison


def proposition_1_cases(args) -> list[dict]:
    """Prop. 1 against autodiff (:func:`proposition_1_errors`) at a generic Θ (pairing broken), width and length
    :data:`PROPOSITION_1_SIZE`, 6 sequences, for each activation of :func:`activations_of` and α below and above 1/σ₁.

    Args:
        args: the study's options (``d``, ``activation``, ``quick``).

    Returns:
        One dict per case: activation, α, and the three errors.
    """
    cases = []
    m, length = PROPOSITION_1_SIZE
    for activation in activations_of(args):
        s1 = gflow.models.ACTIVATIONS[activation].sigma1
        for alpha in (0.5 / s1, 1.5 / s1):
            model = gflow.models.elman_cayci_eryilmaz(key(8, 1), m, args.d, alpha=alpha, activation=activation)
            kw, ku = jax.random.split(key(8, 2))
            model = eqx.tree_at(lambda mm: (mm.W, mm.A), model,  # a generic point: pairing broken
                                (model.W + 0.1 * jax.random.normal(kw, (m,)),
                                 model.A + 0.3 * jax.random.normal(ku, model.A.shape)))
            teacher = transport_teacher(key(8, 3), args.d, alpha=alpha, activation=activation, n_samples=256)
            loss = gflow.objectives.SampleLoss.from_teacher(key(8, 4), teacher, 6, length, sampler=sampler(args))
            rel_h, off_max, rel_l = (float(v) for v in proposition_1_errors(model, loss))
            cases.append({"activation": activation, "alpha": alpha, "hidden_rel_error": rel_h,
                          "off_diagonal_max": off_max, "loss_gradient_rel_error": rel_l})
    return cases


def projected_gd_runs(args):
    """Part E: projected GD (:func:`projected_gd`, τ = ``args.tau``) for each α of ``args.alphas`` ("short",
    "long"), T of ``args.lengths`` and seed.

    Args:
        args: the study's options.

    Returns:
        ``(rows, usage, trajectories)``: one row per run (R_S(0), min_(s<τ) R_S, its ratio, the constraint excess,
        max ‖W‖, R_S at the averaged parameters at τ over τ/2, α_m σ₁), and by (regime, T) the constraint usage
        curves and the trajectory of seed 0.
    """
    sigma = gflow.models.ACTIVATIONS[args.activation]
    rows, usage, trajs = [], {}, {}
    total = len(args.alphas) * len(args.lengths) * args.seeds
    print(f"E. projected GD, η = 1/(T√τ), τ = {args.tau}, m = {args.m}, n = {args.n}: {total} runs", flush=True)
    count = 0
    for label, alpha in zip(("short", "long"), args.alphas):
        for T in args.lengths:
            for seed in range(args.seeds):
                count += 1
                t0 = time.time()
                _, loss, model0 = problem(args, alpha, T, seed)
                traj = projected_gd(args, loss, model0, T, args.tau, f"{label} α={alpha:g} T={T} seed {seed}", alpha=alpha)
                excess, w_use, u_use, w_norms = constraint_excess(args, model0, traj)
                r0 = float(traj.loss[0])
                best = float(np.min(traj.loss[:-1]))  # min over s < τ (Theorem 1)
                averaged = averaged_loss(loss, traj, args.tau) / averaged_loss(loss, traj, args.tau // 2)
                rows.append({"regime": label, "alpha": alpha, "T": T, "seed": seed, "R0": r0, "best": best,
                             "relative_best": best / r0, "final_relative": float(traj.loss[-1]) / r0,
                             "excess": excess, "max_w_norm": float(np.max(w_norms)), "averaged_ratio": averaged,
                             "alpha_m_sigma1": (alpha + args.rho / math.sqrt(args.m)) * sigma.sigma1})
                if seed == 0:
                    usage[(label, T)] = (w_use, u_use)
                    trajs[(label, T)] = traj
                print(f"  [{count}/{total}] {label} α={alpha:g} T={T} seed {seed}: R0={r0:.3g}, "
                      f"min R/R0={best / r0:.3g}, constraint excess {excess:.1e} ({time.time() - t0:.1f} s)",
                      flush=True)
    return rows, usage, trajs


def step_size_runs(args) -> list[dict]:
    """Part F: projected and plain GD from the same init (seed 0) at T = ``args.p13_length`` and η = c/(T√τ).

    Args:
        args: the study's options (``step_multipliers``, ``alphas``, ``tau``, …).

    Returns:
        One row per run: regime, α, c, η, method, status, best and final loss over R_S(0), max_s ‖W‖_{∞,∞} σ₁.
    """
    sigma = gflow.models.ACTIVATIONS[args.activation]
    T = args.p13_length
    rows = []
    total = 2 * len(args.alphas) * len(args.step_multipliers)
    print(f"F. projected vs plain GD at T = {T}, η = c/(T√τ), c ∈ {args.step_multipliers}: {total} runs", flush=True)
    count = 0
    for label, alpha in zip(("short", "long"), args.alphas):
        _, loss, model0 = problem(args, alpha, T, 0)
        for c in args.step_multipliers:
            eta = c / (T * math.sqrt(args.tau))
            for method in ("projected", "plain"):
                count += 1
                t0 = time.time()
                kw = dict(save_at=np.arange(args.tau + 1), progress=False, config={"study": "memory_cutoff"})
                if method == "projected":
                    traj = gflow.discrete.run_projected_gd(loss, model0, lr=eta, steps=args.tau, projection=projection_of(args, model0),
                                                  **kw)
                else:
                    traj = gflow.discrete.run_gd(loss, model0, lr=eta, steps=args.tau, **kw)
                r0 = float(traj.loss[0])
                rows.append({"regime": label, "alpha": alpha, "c": c, "eta": eta, "method": method,
                             "status": traj.status, "relative_best": float(np.min(traj.loss)) / r0,
                             "relative_final": float(traj.loss[-1]) / r0,
                             "max_w_sigma1": max_w_along(traj) * sigma.sigma1})
                rr = rows[-1]
                print(f"  [{count}/{total}] {label} c={c:g} {method}: {rr['status']}, min R/R0={rr['relative_best']:.3g}, "
                      f"final R/R0={rr['relative_final']:.3g}, max_s ‖W‖∞σ₁={rr['max_w_sigma1']:.3f} "
                      f"({time.time() - t0:.1f} s)", flush=True)
    return rows


def transport_runs(args, tight_rtol: float):
    """Part G, per seed: the transported point Θ̄ at each width of ``args.p6_widths`` and the plain gradient flow
    from Θ(0) against the Lyapunov bound (:func:`p14_flow`).

    Args:
        args: the study's options.
        tight_rtol: the tolerance of seed 0's repeat of the flow.

    Returns:
        ``(losses, exponents, feasible, flows, curve)``: R_S(Θ̄) per seed and width, its fitted exponent in m per
        seed, the largest √m·move/ν̄ of Θ̄, one dict per seed's flow, and seed 0's curves of the bound.
    """
    alpha, T = args.alphas[0], args.transport_length
    losses, exponents, feasible, flows, curve = [], [], 0.0, [], None
    for seed in range(args.seeds):
        t0 = time.time()
        teacher, loss, model0 = problem(args, alpha, T, seed, samples=args.transport_samples)
        per_m = []
        for m in args.p6_widths:
            init = student(args, alpha, seed, m)
            bar = transported_point(teacher, init)
            per_m.append(float(loss(bar)))
            feasible = max(feasible, max(neuron_moves(bar, init)) * math.sqrt(m) / args.nu)
        losses.append(per_m)
        exponents.append(an.fit_power_law(args.p6_widths, per_m))
        bar0 = transported_point(teacher, model0)
        traj, excess, ratio, scalars = p14_flow(args, loss, model0, bar0)
        w_move, u_move = (max(v) for v in zip(*(neuron_moves(traj.model_at(i), model0) for i in range(len(traj.ts)))))
        flows.append(dict(scalars, seed=seed, max_excess=float(np.max(excess)), max_ratio=float(np.max(ratio)),
                          radius_needed=max(w_move, u_move) * math.sqrt(args.m), final_loss=float(traj.loss[-1])))
        if seed == 0:
            tight = p14_flow(args, loss, model0, bar0, rtol=tight_rtol)[1]  # docs/design.md, "Studies"
            flows[0]["max_excess_rtol_1e-10"] = float(np.max(tight))
            curve = {"t": traj.ts[1:], "excess": excess, "ratio": ratio}
        f = flows[-1]
        print(f"  seed {seed}: R_S(Θ̄) = {per_m} (exponent {exponents[-1]:.3f}); flow to t₁ = {f['t1']:.3g}: max "
              f"excess {f['max_excess']:.3g} R_S(0), needs ρ >= {f['radius_needed']:.3g} ({time.time() - t0:.1f} s)",
              flush=True)
    return losses, exponents, feasible, flows, curve


def sample_size_runs(args):
    """Part H: projected GD at each training-set size of ``args.p10_sizes`` (fixed teacher, width, τ = ``args.p10_tau``).

    Args:
        args: the study's options.

    Returns:
        ``(best, test, initial)``: (seeds, sizes) arrays of min_(s<τ) R_S, the test loss on ``args.test_sequences``
        fresh sequences at that iterate, and R_S(0).
    """
    alpha, T, sizes = args.alphas[0], args.transport_length, args.p10_sizes
    best, test, initial = (np.zeros((args.seeds, len(sizes))) for _ in range(3))
    for seed in range(args.seeds):
        for j, n in enumerate(sizes):
            t0 = time.time()
            teacher, loss, model0 = problem(args, alpha, T, seed, n=n)
            if j == 0:
                test_loss = gflow.objectives.SampleLoss.from_teacher(key(seed, 4), teacher, args.test_sequences, T,
                                                                      sampler=sampler(args))
            traj = projected_gd(args, loss, model0, T, args.p10_tau, f"P10 n={n} seed {seed}")
            s = int(np.argmin(traj.loss[:-1]))  # min over s < τ (Theorem 1)
            best[seed, j], initial[seed, j] = traj.loss[s], traj.loss[0]
            test[seed, j] = float(test_loss(traj.model_at(s)))
            print(f"  seed {seed} n={n}: min R_S = {best[seed, j]:.3g} (R_S(0) = {initial[seed, j]:.3g}), test loss "
                  f"{test[seed, j]:.3g} ({time.time() - t0:.1f} s)", flush=True)
    return best, test, initial


def memory_function_curves(z_grid):
    """§4.1's memory functions μ_T = μ_{0,T}(z) μ_{1,T}(z), T = 1 … 64, as direct partial sums.

    Args:
        z_grid: the values of z = α σ₁.

    Returns:
        ``(T, curves, bounded, critical, rates, rate_error)``: the curves by z, sup_T μ_T (1 − z)³ over z < 1, the
        relative error against T²(T+1)/2 at z = 1, the fitted rates of μ_T/T on T = 33 … 64 for z > 1 and their
        largest relative error against 2 ln z.

    Raises:
        RuntimeError: when gflow.analysis's memory functions disagree with the sums (beyond 1e-12).
    """
    ts = np.arange(1, 65)
    k = np.arange(len(ts))
    curves = {z: np.cumsum(z**k) * np.cumsum((k + 1) * z**k) for z in z_grid}  # μ_{0,T} μ_{1,T}, T = 1 … 64
    library = max(abs(float(an.memory_function_0(z, 64) * an.memory_function_1(z, 64)) / curves[z][-1] - 1)
                  for z in z_grid)
    if library > 1e-12:
        raise RuntimeError(f"gflow.analysis memory functions disagree with the direct sums ({library:.2e})")
    bounded = max(float(curves[z][-1] * (1 - z) ** 3) for z in z_grid if z < 1)  # sup_T μ_T = 1/(1 − z)³
    critical = float(np.max(np.abs(curves[1.0] - ts**2 * (ts + 1) / 2) / (ts**2 * (ts + 1) / 2)))
    rates = {z: an.fit_exponential_rate(ts[32:], curves[z][32:] / ts[32:]) for z in z_grid if z > 1}
    rate_err = max(abs(r / (2 * np.log(z)) - 1) for z, r in rates.items())
    return ts, curves, bounded, critical, rates, rate_err


def gradient_curves(args):
    """max_i ‖∂_{Θ_i} H_t⁽ⁱ⁾‖ at a Def. 1 initialization of width 64, against t and Lemma 1's bounds.

    Args:
        args: the study's options (``alphas``, ``activation``, ``d``, ``grad_length``, ``small_radius``).

    Returns:
        ``(σ, t, curves, u_parts, worst_ratio, bound)``: the activation, t = 1 … grad_length, the curves and their U
        parts by (regime, input radius), the largest ratio to σ₀σ₁μ₀ and σ₁μ₀·radius, and the unit-input bound
        σ₁μ₀√(σ₀² + 1) by regime.
    """
    sigma = gflow.models.ACTIVATIONS[args.activation]
    ts = np.arange(1, args.grad_length + 1)
    curves, u_parts, worst_ratio = {}, {}, 0.0
    for label, alpha in zip(("short", "long"), args.alphas):
        model = gflow.models.elman_cayci_eryilmaz(key(9, 1), 64, args.d, alpha=alpha, activation=args.activation)
        mu0 = np.cumsum((alpha * sigma.sigma1) ** np.arange(len(ts)))  # μ_{0,t}(ασ₁), t = 1 … T
        for radius in (args.small_radius, 1.0):
            x = gflow.objectives.unit_ball_sequences(key(9, 2), 8, args.grad_length, args.d, radius=radius)
            dw_max, du_max, norms = (np.asarray(v) for v in gradient_maxima(model, x))
            # Lemma 1's proof (P3): |∂H/∂W_ii| <= σ₀ σ₁ μ₀, ‖∂H/∂U_i‖ <= σ₁ μ₀ (radius·… for inputs of norm <= radius)
            ratio = max(float(np.max(dw_max / (sigma.sigma0 * sigma.sigma1 * mu0))),
                        float(np.max(du_max / (sigma.sigma1 * mu0 * radius))))
            worst_ratio = max(worst_ratio, ratio)
            curves[(label, radius)] = norms
            u_parts[(label, radius)] = du_max
    bound = {label: sigma.sigma1 * np.sqrt(sigma.sigma0**2 + 1) * np.cumsum((a * sigma.sigma1) ** np.arange(len(ts)))
             for label, a in zip(("short", "long"), args.alphas)}
    return sigma, ts, curves, u_parts, worst_ratio, bound


def figures(args, ts_mu, mu_curves, ts_g, g_curves, g_bound, e_rows, usage, trajs, f_rows) -> dict:
    """Draw memory_cutoff.png, the memory-function and projected-GD picture of seed 003 (Theorem 1, Prop. 1, the
    memory functions μ_{0,T}, μ_{1,T} of eq. (14)): μ_T(z) against T (003-P11(a)); the hidden-state gradients at
    init against their bound (003-P3, P11(b)); the best relative training loss of projected GD against T in the
    short- and long-memory regimes (003-P11(c)); projected against plain GD over step multipliers (003-P13). And
    projected_gd.png: the per-neuron constraint usage along projected GD (003-P8(a)) and its loss curves.

    Args:
        args: the study's options (``activation``, ``alphas``, ``lengths``, ``seeds``, ``tau``, ``m``,
            ``p13_length``).
        ts_mu: the lengths T of the memory functions.
        mu_curves: μ_T by z = ασ₁.
        ts_g: the times of the gradient norms.
        g_curves: the gradient norms by (regime, input radius).
        g_bound: the bound σ₁μ₀√(σ₀² + 1) by regime.
        e_rows: part E's rows (regime, T, seed, relative best loss).
        usage: the constraint usage (W, U) by (regime, T).
        trajs: projected GD's trajectories by (regime, T).
        f_rows: part F's rows (method, regime, c, relative final loss).

    Returns:
        {file name: matplotlib figure}.
    """
    from gflow.plot import figure_grid, label_axes

    sigma = gflow.models.ACTIVATIONS[args.activation]
    z = {lab: a * sigma.sigma1 for lab, a in zip(("short", "long"), args.alphas)}
    colors = {"short": "C0", "long": "C3"}
    fig, axes = figure_grid(2, 2, panel=(6, 4.75))
    ax = axes[0, 0]
    for zz, c in mu_curves.items():
        ax.semilogy(ts_mu, c, label=f"z = {zz:g}")
    label_axes(ax, xlabel="T", ylabel="μ_T = μ_{0,T}(z) μ_{1,T}(z)",
               title="P11(a): memory functions, bounded / polynomial / exponential")
    ax = axes[0, 1]
    for (lab, r), c in g_curves.items():
        ax.semilogy(ts_g, c, color=colors[lab], ls="-" if r == 1.0 else "--", label=f"ασ₁ = {z[lab]:g}, ‖X_t‖ <= {r:g}")
    for lab, b in g_bound.items():
        ax.semilogy(ts_g, b, color=colors[lab], ls=":", lw=1, label=f"bound σ₁μ₀√(σ₀²+1), ασ₁ = {z[lab]:g}")
    label_axes(ax, ylim=(1e-6, 1e4), xlabel="t", ylabel="max_i ‖∂_{Θ_i} H_t⁽ⁱ⁾‖ at init", legend=7,
               title="P3 / P11(b): hidden-state gradients (bound for unit inputs)")
    ax = axes[1, 0]
    for lab in ("short", "long"):
        rr = [r for r in e_rows if r["regime"] == lab]
        ax.semilogy([r["T"] for r in rr], [r["relative_best"] for r in rr], "o", color=colors[lab], alpha=0.5)
        med = [np.median([r["relative_best"] for r in rr if r["T"] == T]) for T in args.lengths]
        ax.semilogy(args.lengths, med, "-", color=colors[lab],
                    label=f"α_m σ₁ = {rr[0]['alpha_m_sigma1']:.3g} (median of {args.seeds})")
    label_axes(ax, xlabel="sequence length T", ylabel="min_s R_S(Θ(s)) / R_S(Θ(0))",
               title=f"P11(c): projected GD, τ = {args.tau}, η = 1/(T√τ), m = {args.m}")
    ax = axes[1, 1]
    for method, ls in (("projected", "-"), ("plain", "--")):
        for lab in ("short", "long"):
            rr = [r for r in f_rows if r["method"] == method and r["regime"] == lab]
            ax.loglog([r["c"] for r in rr], [r["relative_final"] for r in rr], ls, marker="o", color=colors[lab],
                      label=f"{method} GD, ασ₁ = {z[lab]:g}")
    ax.axhline(1.0, color="gray", lw=0.8)
    label_axes(ax, xlabel="step multiplier c (η = c/(T√τ))", ylabel="final R_S / R_S(Θ(0))",
               title=f"P13: projected vs plain GD at T = {args.p13_length}")
    memory = fig

    fig, (ax, ax_loss) = figure_grid(1, 2)
    for (lab, T), (w_use, u_use) in usage.items():
        if T in (args.lengths[0], args.lengths[-1]):
            long_T = T == args.lengths[-1]
            s = np.arange(len(w_use))
            ax.plot(s, w_use, color=colors[lab], ls="-" if long_T else ":", lw=1,
                    label=f"√m max|ΔW_ii|/ρ_w, ασ₁={z[lab]:g}, T={T}")
            ax.plot(s, u_use, color=colors[lab], ls="--" if long_T else "-.", lw=1,
                    label=f"√m max‖ΔU_i‖/ρ_u, ασ₁={z[lab]:g}, T={T}")
    ax.axhline(1.0, color="k", lw=0.8)
    label_axes(ax, xlabel="iteration s", ylabel="constraint usage (<= 1)", ylim=(0, 1.1), legend=6,
               title="P8(a): per-neuron constraints along projected GD")
    for (lab, T), traj in trajs.items():
        ax_loss.semilogy(np.arange(len(traj.loss)), traj.loss / traj.loss[0], color=colors[lab],
                         alpha=0.35 + 0.65 * args.lengths.index(T) / max(1, len(args.lengths) - 1), lw=1,
                         label=f"ασ₁={z[lab]:g}, T={T}")
    label_axes(ax_loss, xlabel="iteration s", ylabel="R_S(Θ(s)) / R_S(Θ(0))", legend=None,
               title="projected GD loss curves (seed 0)")
    ax_loss.legend(fontsize=6, ncol=2)
    return {"memory_cutoff.png": memory, "projected_gd.png": fig}


def transport_figure(args, g, h):
    """Draw transport_samples.png, seed 003's transport argument (Prop. 5, Theorem 1): R_S(Θ̄) of the transported point
    against the width m with 1/m (003-P6); the flow's average loss (1/t)∫R over its bound
    R(Θ̄) + ‖Θ(0) − Θ̄‖²/(2t) (003-P14); projected GD's best training loss and its test loss against the sample size
    n (003-P10).

    Args:
        args: the study's options (``m``, ``p10_tau``).
        g: part G's results (``widths``, ``R_bar``, ``flow_seed0``).
        h: part H's results (``sizes``, ``best``, ``test``).

    Returns:
        The matplotlib figure.
    """
    from gflow.plot import figure_grid, label_axes

    fig, axes = figure_grid(1, 3, panel=(16 / 3, 4.5))
    ax = axes[0]
    widths = np.asarray(g["widths"], dtype=float)
    for per_m in g["R_bar"]:
        ax.loglog(widths, per_m, "o-", color="C0", alpha=0.3, lw=1)
    med = np.median(g["R_bar"], axis=0)
    ax.loglog(widths, med, "k-", lw=2, label=f"median of {len(g['R_bar'])} seeds")
    ax.loglog(widths, med[0] * widths[0] / widths, "k:", label="∝ 1/m")
    label_axes(ax, xlabel="width m", ylabel="R_S(Θ̄)", title="P6: transported point, no training")
    ax = axes[1]
    ax.semilogx(g["flow_seed0"]["t"], g["flow_seed0"]["ratio"], color="C0",
                label="(1/t)∫R / (R(Θ̄) + ‖Θ(0) − Θ̄‖²/(2t))")
    ax.axhline(1.0, color="k", lw=0.8)
    label_axes(ax, xlabel="flow time t", ylabel="average loss / bound (<= 1)",
               title=f"P14: gradient flow, m = {args.m} (seed 0)")
    ax = axes[2]
    sizes = np.asarray(h["sizes"], dtype=float)
    for name, color in (("best", "C0"), ("test", "C3")):
        for row in h[name]:
            ax.loglog(sizes, row, "-", color=color, alpha=0.25, lw=1)
        ax.loglog(sizes, np.median(h[name], axis=0), "o-", color=color, lw=2,
                  label="min_s R_S (training)" if name == "best" else "test loss at that iterate")
    label_axes(ax, xlabel="training sequences n", ylabel="loss",
               title=f"P10: projected GD, m = {args.m}, τ = {args.p10_tau}")
    return fig
