# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     name: python3
# ---

# %% [markdown]
# # A saved gradient-flow trajectory, at a glance
#
# Loads one trajectory written by `Trajectory.save` (for example by `studies/balance_limit.py`, which saves
# seed 0 of every ε under `out/balance_limit/trajectories/`) and plots the loss, the balancedness ratio
# ρ_bal = ‖B − Cᵀ‖/‖B + Cᵀ‖ (seed 000, Def. 4), the eigenvalues of A along the flow, and the impulse
# responses h_j = C A^j B at a few saved times against the teacher's w_j.
#
# This is a plain-text notebook (jupytext "percent" format): run it as a script, or open it in Jupyter with
# jupytext / in VS Code as a notebook. Set `GFLOW_TRAJECTORY` to choose the run. A saved trajectory does not
# hold its teacher: the one below is balance_limit's default (`--teacher-dim 5 --teacher-seed 0`); set
# `GFLOW_TEACHER_DIM` and `GFLOW_TEACHER_SEED` to match another run.

# %%
import os

import jax
import matplotlib.pyplot as plt
import numpy as np

import gflow
import gflow.plot
from gflow import analysis, teachers

path = os.environ.get("GFLOW_TRAJECTORY", "out/balance_limit/trajectories/eps1e-05_seed0")
figures_out = os.environ.get("GFLOW_NOTEBOOK_OUT")  # also save the figures there, when set
traj = gflow.load_trajectory(path)
teacher = teachers.balanced(jax.random.key(int(os.environ.get("GFLOW_TEACHER_SEED", "0"))),
                            int(os.environ.get("GFLOW_TEACHER_DIM", "5")))
print(traj)
print("loss convention:", traj.convention, "| status:", traj.status, "| solver stats:", traj.stats)

# %% [markdown]
# ## Loss and balancedness
# ρ_bal is recomputed from the saved parameters when the run did not record it as a diagnostic.

# %%
models = [traj.model_at(i) for i in range(len(traj.ts))]
rho = traj.diagnostics.get("rho_bal")
if rho is None:
    rho = np.array([float(analysis.balance_ratio(m)) for m in models])
t = np.maximum(traj.ts, traj.ts[traj.ts > 0].min() if np.any(traj.ts > 0) else 1.0)

fig, axes = plt.subplots(1, 2, figsize=(11, 4))
gflow.plot.plot_loss(traj, ax=axes[0])
axes[1].loglog(t, rho)
axes[1].set(xlabel="t", ylabel="ρ_bal", title="balancedness ratio ‖B − Cᵀ‖ / ‖B + Cᵀ‖")
fig.tight_layout()
if figures_out:
    fig.savefig(os.path.join(figures_out, "loss_and_balance.png"), dpi=110)
plt.show()

# %% [markdown]
# ## Eigenvalues of A along the flow
# Real parts for a general A (complex pairs share a real part), the eigenvalues themselves for a symmetric A.

# %%
eigenvalues = np.array([np.sort_complex(np.linalg.eigvals(np.asarray(m.transition()))) for m in models])
fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogx(t, eigenvalues.real, lw=0.8)
ax.set(xlabel="t", ylabel="Re λ_i(A)", title="spectral dynamics of A")
fig.tight_layout()
if figures_out:
    fig.savefig(os.path.join(figures_out, "eigenvalues.png"), dpi=110)
plt.show()

# %% [markdown]
# ## Impulse responses against the teacher's
# Left: the final model (`gflow.plot.plot_impulse_response`; the lags j < k that the loss sees are shaded).
# Right: the student at a few saved times.

# %%
horizon = 40
picks = np.unique(np.linspace(0, len(models) - 1, 5).astype(int))
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
gflow.plot.plot_impulse_response(traj, teacher=teacher, ax=axes[0], horizon=horizon)
for i in picks:
    axes[1].plot(np.asarray(models[i].impulse_response(horizon)).reshape(horizon, -1)[:, 0], label=f"t = {traj.ts[i]:.3g}")
axes[1].plot(np.asarray(teacher.impulse_response(horizon)), "k--", lw=1.0, label="teacher")
axes[1].set(xlabel="lag j", ylabel="h_j", title="impulse response of the student along the flow")
axes[1].legend(fontsize=8)
fig.tight_layout()
if figures_out:
    fig.savefig(os.path.join(figures_out, "impulse_responses.png"), dpi=110)
plt.show()
