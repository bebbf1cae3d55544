# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # Change the teacher, watch the extrapolation transition move
#
# Seed 000 (Thm 5, Fig. 1a): a balanced student trained by gradient flow from near-zero initialization on
# sequences of length k extrapolates beyond k once k > 2d̂ as its loss goes to zero, where d̂ is the teacher's
# state dimension. This notebook trains one student per k in a single batched call (`gflow.solve_flows`), plots
# the extrapolation error max_{k ≤ j < H} |h_j − w_j| against k, and reads off where that error drops. Change
# `TEACHER_DIM` (or the teacher itself) and the drop moves with it.
#
# Plain-text notebook (jupytext percent format). `GFLOW_NOTEBOOK_QUICK=1` shrinks it to a few seconds.

# %%
import os

import jax
import matplotlib.pyplot as plt
import numpy as np

import gflow
import gflow.plot
from gflow import analysis, initializers, teachers

quick = os.environ.get("GFLOW_NOTEBOOK_QUICK") == "1"
figures_out = os.environ.get("GFLOW_NOTEBOOK_OUT")

TEACHER_DIM = 2 if quick else 5      # d̂: the theory's transition is at k = 2 d̂ (in the limit L → 0)
STUDENT_DIM = 8 if quick else 40     # d
INIT_SCALE = 1e-3
T1 = 1e4 if quick else 1e6           # long flows: the transition sharpens only at small loss
HORIZON = 60
ks = list(range(2, 4 * TEACHER_DIM + 2, 2))

teacher = teachers.balanced(jax.random.key(0), TEACHER_DIM)   # try teachers.delay(TEACHER_DIM) too
model0 = initializers.balanced(jax.random.key(1), STUDENT_DIM, scale=INIT_SCALE, structure="symmetric")

# %% [markdown]
# One loss per k, padded to the largest k (zero weights) so that all flows have one shape and run batched.

# %%
losses = [gflow.PopulationLoss(teacher, k).padded_to(max(ks)) for k in ks]
trajs = gflow.solve_flows(losses, [model0] * len(ks), T1, save_at=20)
errors = np.array([float(analysis.tail_error(tr.final, teacher, k, HORIZON)) for tr, k in zip(trajs, ks)])
zero = np.array([float(analysis.zero_solution_error(teacher, k, HORIZON)) for k in ks])
final_loss = np.array([tr.loss[-1] for tr in trajs])
for k, e, z, lo in zip(ks, errors, zero, final_loss):
    print(f"k={k:3d}  tail error {e:.3e}  (zero solution {z:.3e})  final loss {lo:.2e}")

# %% [markdown]
# Where the error drops, read off the errors printed above (not assumed): the smallest k from which every
# student's tail error is below a tenth of the zero solution's (it extrapolates far better than predicting
# nothing), and the k before it. Theorem 5 puts the transition at k = 2 d̂ in the limit L → 0; a flow stopped at a
# finite t1 can show it later, since just past 2 d̂ the error shrinks only as fast as the loss does (compare the
# final losses above).

# %%
EXTRAPOLATES = 0.1  # tail error / zero solution's error below which a student counts as extrapolating (ours)
below = errors < EXTRAPOLATES * zero
first = next((i for i in range(len(ks)) if below[i:].all()), None)
if first is None:
    k_before = k_after = None
    print(f"no k up to {ks[-1]} extrapolates at t1 = {T1:g}; the theory's k = 2 d̂ = {2 * TEACHER_DIM}")
else:
    k_before, k_after = (ks[first - 1] if first else None), ks[first]
    print(f"the tail error drops below {EXTRAPOLATES:g} × the zero solution's between k = {k_before} and "
          f"k = {k_after} ({errors[max(first - 1, 0)]:.2e} → {errors[first]:.2e}); the theory's k = 2 d̂ = "
          f"{2 * TEACHER_DIM}")

# %%
fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogy(ks, errors, "o-", label="student (gradient flow)")
ax.semilogy(ks, zero, "k:", label="zero solution")
ax.axvline(2 * TEACHER_DIM, color="gray", ls="--", label="k = 2 d̂ (theory, L → 0)")
if k_before is not None:
    ax.axvspan(k_before, k_after, color="C1", alpha=0.15, label=f"measured drop, k = {k_before} → {k_after}")
ax.set(xlabel="training length k", ylabel=f"max_(k ≤ j < {HORIZON}) |h_j − w_j|",
       title=f"extrapolation, d̂ = {TEACHER_DIM}, d = {STUDENT_DIM}, t1 = {T1:g}")
ax.legend(fontsize=8)
fig.tight_layout()
if figures_out:
    fig.savefig(os.path.join(figures_out, "extrapolation_vs_k.png"), dpi=110)
plt.show()

# %% [markdown]
# The flows themselves: the loss of each k (one line per flow of the batch), and the final impulse responses
# against the teacher's. The students past the drop measured above follow the teacher beyond their training
# window; those before it do not.

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
gflow.plot.plot_loss(trajs, ax=axes[0])
gflow.plot.plot_impulse_response(trajs, teacher=teacher, ax=axes[1], horizon=HORIZON)
for ax in axes:  # name the flows by their training length
    for line, k in zip(ax.get_lines(), ks):
        line.set_label(f"k = {k}")
    ax.legend(fontsize=8)
fig.tight_layout()
if figures_out:
    fig.savefig(os.path.join(figures_out, "losses_and_impulse_responses.png"), dpi=110)
plt.show()
