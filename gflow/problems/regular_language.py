"""Seed 002's regular languages (Panigrahi & Goyal, NeurIPS 2021, regular-language claims; 002-P5, 002-P6): all
strings of L bits, their membership, and training and test sets drawn from one label-balanced distribution (or the
out-of-distribution split of D_{L1}), as studies/regular_language.py trains seed 002's Elman RNN on them.
"""

from __future__ import annotations

import numpy as np

import gflow
from gflow import GflowInputError

HELD_OUT = 0.3  # share of a small class's strings kept for the test set (ours)
REPRESENTABLE = ("d_l1", "contains")  # seed 002: efficiently representable in its concept class
NAMES = {"d_l1": "D_L1 (exactly one 1)", "parity": "PARITY", "contains": "contains '{pattern}'"}


def _classes(language: str, length: int, n_train: int, n_test: int, pattern: str):
    """All strings of ``length`` bits, their 0/1 labels, and the classes of the sampling distribution as (mask,
    strings per training set, strings per test set): members and non-members half each; for D_{L1} the
    non-members split into near misses (zero or two 1s) and the rest, a quarter of each set each."""
    if n_train % 2 or n_test % 2 or n_train < 2 or n_test < 2:
        raise GflowInputError(f"`n_train` and `n_test` must be even and positive, got {n_train}, {n_test}")
    every = (np.arange(2 ** length)[:, None] >> np.arange(length)[::-1]) & 1
    labels = gflow.objectives.membership(language, every, pattern=pattern)
    if language == "d_l1":
        near = (labels == 0) & np.isin(every.sum(axis=1), (0, 2))
        classes = [(labels == 1, n_train // 2, n_test // 2), (near, n_train // 4, n_test // 4),
                   ((labels == 0) & ~near, n_train // 2 - n_train // 4, n_test // 2 - n_test // 4)]
    else:
        classes = [(labels == 1, n_train // 2, n_test // 2), (labels == 0, n_train // 2, n_test // 2)]
    for mask, _, _ in classes:
        if not mask.any():
            raise GflowInputError(f"{language} of length {length} (pattern {pattern!r}): a class of the sampling "
                                  "distribution is empty")
    return every, labels, classes


def iid_split(seed: int, language: str, length: int, n_train: int, n_test: int, *, pattern: str = "101"):
    """Training and test strings drawn independently from one distribution D.

    D is label-balanced: a member or a non-member with probability 1/2 each, then uniform over the strings of its
    class (for D_{L1}, a non-member is a near miss with zero or two 1s or another non-member, 1/2 each). Each set
    is a class-stratified sample of D (exactly half members; for D_{L1} a quarter near misses), every string drawn
    uniformly *with replacement* within its class, the test set independently of the training set: so test accuracy
    estimates the population risk under D (seed 002 Thm 3.1's quantity), and a test string may be a training string
    (D_{L1} has only L members: its test members are, almost surely, strings seen in training).

    Args:
        seed: the seed of numpy's generator.
        language: "d_l1", "parity" or "contains" (:data:`gflow.objectives.LANGUAGES`).
        length: the string length L.
        n_train: the training set's size, even.
        n_test: the test set's size, even.
        pattern: the substring of "contains".

    Returns:
        (z_train, y_train, z_test, y_test): 0/1 strings (n, L) and 0/1 labels.
    """
    every, labels, classes = _classes(language, length, n_train, n_test, pattern)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for mask, c_tr, c_te in classes:
        pool = np.flatnonzero(mask)
        train.append(rng.choice(pool, c_tr, replace=True))
        test.append(rng.choice(pool, c_te, replace=True))
    tr, te = rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))
    return every[tr], labels[tr], every[te], labels[te]


def held_out_split(seed: int, language: str, length: int, n_train: int, n_test: int, *, pattern: str = "101",
                   held_out: float = HELD_OUT):
    """The out-of-distribution variant (the split of commit 1056b11): label-balanced training and test strings
    with no string in both.

    Each class of :func:`iid_split`'s distribution is shuffled; a class with at least as many strings as both sets
    need gives each set distinct strings, a smaller one is split, ``held_out`` of its strings (at least one) for the
    test set and the rest for training, each set cycling through its own strings (so every string appears about
    equally often). For D_{L1} the test members have their 1 at positions never seen in training: the test
    distribution is not the training distribution.

    Args:
        seed: as :func:`iid_split`.
        language: as :func:`iid_split`.
        length: as :func:`iid_split`.
        n_train: as :func:`iid_split`.
        n_test: as :func:`iid_split`.
        pattern: as :func:`iid_split`.
        held_out: the share of a small class's strings kept for the test set.

    Returns:
        (z_train, y_train, z_test, y_test).
    """
    if not 0 < held_out < 1:
        raise GflowInputError(f"`held_out` must lie in (0, 1), got {held_out!r}")
    every, labels, classes = _classes(language, length, n_train, n_test, pattern)
    rng = np.random.default_rng(seed)
    train, test = [], []
    for mask, c_tr, c_te in classes:
        pool = rng.permutation(np.flatnonzero(mask))
        if len(pool) >= c_tr + c_te:
            test_pool, train_pool = pool[:c_te], pool[c_te:c_te + c_tr]
        else:
            if len(pool) < 2:
                raise GflowInputError(f"{language} of length {length}: a class of {len(pool)} string(s) cannot be "
                                      "split into training and held-out test strings")
            cut = min(max(1, round(held_out * len(pool))), len(pool) - 1)
            test_pool, train_pool = pool[:cut], pool[cut:]
        train.append(np.resize(train_pool, c_tr))
        test.append(np.resize(test_pool, c_te))
    tr, te = rng.permutation(np.concatenate(train)), rng.permutation(np.concatenate(test))
    return every[tr], labels[tr], every[te], labels[te]


SPLITS = {"iid": iid_split, "ood": held_out_split}


def figure(rows: list[dict], languages, widths, min_test: float, *, pattern: str, length: int):
    """Train and test accuracy against the width, one panel per language: each seed, the medians over seeds, the
    out-of-distribution variant where run, chance and the bar of 002-P6.

    Args:
        rows: one dict per run ("language", "split", "m", "seed", "train", "test").
        languages: the languages, one panel each.
        widths: the widths m.
        min_test: 002-P6's bar on the test accuracy.
        pattern: the substring of "contains".
        length: the string length L.

    Returns:
        The matplotlib figure.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(languages), figsize=(5 * len(languages), 4.2), squeeze=False)
    for ax, lang in zip(axes[0], languages):
        iid = [r for r in rows if r["language"] == lang and r["split"] == "iid"]
        for split, style in (("train", "o--"), ("test", "s-")):
            med = [np.median([r[split] for r in iid if r["m"] == m]) for m in widths]
            ax.semilogx(*zip(*[(r["m"], r[split]) for r in iid]), style[0], alpha=0.3,
                        color="C0" if split == "train" else "C3")
            ax.semilogx(widths, med, style, color="C0" if split == "train" else "C3",
                        label=f"{split}, i.i.d. (median of {len({r['seed'] for r in iid})})")
        ood = [r for r in rows if r["language"] == lang and r["split"] == "ood"]
        if ood:
            ws = sorted({r["m"] for r in ood})
            ax.semilogx(ws, [np.median([r["test"] for r in ood if r["m"] == m]) for m in ws], "^:", color="C2",
                        label="test, out of distribution (unseen positions; reported)")
        ax.axhline(0.5, color="gray", ls=":", label="chance")
        post = "" if lang in REPRESENTABLE else ", registered after a run: decides on its confirmatory seeds"
        ax.axhline(min_test, color="k", ls="--", lw=0.8, label=f"P6 bar {min_test:g}{post}")
        ax.set_xticks(widths, [str(m) for m in widths], minor=False)
        ax.set_xticks([], minor=True)
        ax.set(ylim=(0, 1.05), xlabel="width m", ylabel="accuracy of sign(F_L)",
               title=f"{NAMES[lang].format(pattern=pattern)}, L = {length}")
        ax.legend(fontsize=8, loc="lower right")
    return fig
