"""The testable predictions of the source papers, as listed in spec 000 §6 (P1–P16) and spec 001 §5 (1–15).

Each study tags its checks with the ids it tests (``check(..., predictions=["000-P4"])``);
``studies/validation.py`` joins the tags with this list, so a prediction that no study checks shows up as
"not checked" in VALIDATION.md instead of disappearing.
"""

from __future__ import annotations

PREDICTIONS = [
    # id, claim, where it comes from, the study meant to check it, whether a linear model can check it
    ("000-P1", "balancedness B = Cᵀ is conserved from a balanced start (symmetric/diagonal A; GF, GD, Adam)",
     "seed 000 Lemma 6 / E.6", "gd_vs_flow", True),
    ("000-P2", "‖B‖² − ‖C‖² and Q = AAᵀ − AᵀA + BBᵀ − CᵀC are constant under GF; O(η²) drift per GD step",
     "seed 000 Lemma E.7", "balance_limit, gd_vs_flow", True),
    ("000-P3", "early phase: log‖B − Cᵀ‖ has slope −2w0, log‖B + Cᵀ‖ slope +2w0 (loss without 1/2)",
     "seed 000 Prop. 9 sketch / Lemma E.14", "balance_limit", True),
    ("000-P4", "ρ_bal(τ_ε) → 0 as ε → 0 (ρ² = O(ε), ‖A‖²/‖B+Cᵀ‖² = O(ε^½)), for ≥ 75 % of seeds",
     "seed 000 Prop. 9 / Lemma E.12", "balance_limit", True),
    ("000-P5", "for w0 < 0 the roles swap: B + Cᵀ shrinks relative to B − Cᵀ",
     "seed 000 Prop. 9 (sign)", "balance_limit", True),
    ("000-P6", "balanced teacher and student, k > 2d̂, L → 0: exact extrapolation, support ≤ d̂ atoms",
     "seed 000 Thm 5 / Lemma 7", "extrapolation_phase", True),
    ("000-P7", "stable teacher, k > 2d̂: tail error → 0 as L → 0",
     "seed 000 Thm 8", "extrapolation_phase", True),
    ("000-P8", "k ≤ 2d̂ − 1: two balanced teachers with equal losses but different h_{2d̂−1}",
     "seed 000 Lemma A.1 / Cor. A.2", "moment_pairs", True),
    ("000-P9", "d > k: a zero-loss symmetric student with arbitrary h_k … h_{d−1}",
     "seed 000 Prop. 3", "moment_pairs", True),
    ("000-P10", "phase transition of the extrapolation error at k = 2d̂ = 10 (d̂ = 5, d = 40), sharpening as L → 0",
     "seed 000 Fig. 1a", "extrapolation_phase", True),
    ("000-P11", "delay teacher d̂ = 10, general student d = 50: transition near k = 20; k = 8 gives zero, "
     "k = 18 fails after step 18, k = 20 extrapolates", "seed 000 Fig. 1b / Fig. 6", "extrapolation_phase", True),
    ("000-P12", "the transition also appears for a general unbalanced student and a random unbalanced teacher",
     "seed 000 Fig. 3", "extrapolation_phase", True),
    ("000-P13", "extrapolation error is non-decreasing in the init scale; the critical k moves up",
     "seed 000 Fig. 4", "init_scale", True),
    ("000-P14", "k = 10 tracks a few steps past 10 then decays to 0; k = 20 extrapolates",
     "seed 000 Fig. 5", "extrapolation_phase", True),
    ("000-P15", "GRU: critical k_g ≈ 40 ≈ 4 d̂_g; k_g = 30 fails, k_g = 60 extrapolates",
     "seed 000 Fig. 2", "gru_extrapolation", False),
    ("000-P16", "accumulating loss (weights k − i): same minimizers and same k > 2d̂ guarantee",
     "seed 000 App. D", "extrapolation_phase", True),
    ("001-1", "Monte-Carlo empirical loss → (CB − w*)² + Σ_{j≥1} (C A^j B)² at rate O(N^−½)",
     "seed 001 Lemma 3.1 / A.1", "memoryless", True),
    ("001-2", "L_q = 0 for all q iff h_0 = w* and h_j = 0 for j ≥ 1 (j = 1..d suffices)",
     "seed 001 Lemma 3.2", "memoryless", True),
    ("001-3", "k > d: every zero-loss point has h_j = 0 for all j ≥ k", "seed 001 Thm 4.1", "memoryless", True),
    ("001-4", "k ≤ d: the cyclic-shift student has L_k = 0 and h_{md} = w*", "seed 001 Prop. 5.1",
     "memoryless", True),
    ("001-5", "symmetric start (A = Aᵀ, B = Cᵀ) stays symmetric under GF, GD, SGD, Adam",
     "seed 001 Thm 6.1 (1)", "memoryless, gd_vs_flow", True),
    ("001-6", "symmetric init, k ≥ 3, L → 0: h_j → 0 for j ≥ 1 and complementary slackness |λ_i b̃_i c̃_i| → 0",
     "seed 001 Thm 6.1 (2)", "memoryless", True),
    ("001-7", "along symmetric trajectories: max_i |λ_i c̃_i| ≤ L^¼", "seed 001 §3.7 (derived)", "memoryless", True),
    ("001-8", "k = 2: symmetric init can reach L = 0 with |h_j| unbounded", "seed 001 (derived)", "memoryless", True),
    ("001-9", "Lemma 6.3 family: L_k → 0 while L_q → ∞", "seed 001 Lemma 6.3", "memoryless", True),
    ("001-10", "w* < 0 with B0 = −C0ᵀ: the same conclusions", "seed 001 Remark 6.2", "memoryless", True),
    ("001-11", "MIMO, W* symmetric PSD: C u_i = 0 for λ_i ≠ 0 and H_j = 0 for j ≥ 1",
     "seed 001 App. C", "memoryless", True),
    ("001-12", "M = AAᵀ − AᵀA + BBᵀ − CᵀC and ‖B‖² − ‖C‖² are constant under GF",
     "seed 001 §3.5 (derived)", "balance_limit, memoryless", True),
    ("001-13", "from a non-symmetric init, ‖B − Cᵀ‖ becomes small relative to ‖B‖, ‖C‖",
     "seed 001 Fig. 4", "memoryless", True),
    ("001-14", "residual init A0 = I, B0 = C0ᵀ: A → I − uuᵀ, C → √w* uᵀ, rank d − 1",
     "seed 001 (derived)", "memoryless", True),
    ("001-15", "teacher with memory: extrapolation error low for small d_T relative to k, grows beyond",
     "seed 001 Fig. 5", "gru_extrapolation", True),
]
