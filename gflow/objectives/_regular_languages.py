"""Regular languages over {0, 1} and their label-balanced samples, fed to an RNN as seed 002's normalized sequences.

Seed 002 (Panigrahi & Goyal 2021, §4 "regular languages") says that D_{L1} (exactly one 1), pattern
matching (contains a given substring) and PARITY are expressible in its concept class with small complexity, and
reports (in an appendix missing from our copy) that RNNs "perform well on regular language recognition". The bit
encoding is in that missing appendix too; ours follows Def. 3.1 with d = 4:

    x⁽¹⁾ = x⁽ᴸ⁺²⁾ = (0, 0, 0, 1)   (bias tokens),    x⁽ˡ⁺¹⁾ = (ε_x x̄(z_l), 0),   l = 1 … L,
    x̄(0) = (√3/2, 0, 1/2),   x̄(1) = (0, √3/2, 1/2)   (unit vectors with last coordinate 1/2),

so a string of length L becomes a sequence of L + 2 tokens. Membership functions act on integer arrays of bits.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError, one_of, positive_float, positive_int

LANGUAGES = ("d_l1", "parity", "contains")
TOKEN_DIM = 4


def _bits(z) -> np.ndarray:
    z = np.asarray(z)
    if z.ndim not in (1, 2) or z.shape[-1] < 1 or not np.all((z == 0) | (z == 1)):
        raise GflowInputError(f"strings must be arrays of 0/1 bits of shape (L,) or (n, L), got {z!r}")
    return z.astype(np.int64)


def d_l1(z) -> np.ndarray:
    """D_{L1}(z) = 1 iff z contains exactly one 1 (seed 002 §4, Thm H.1).

    Args:
        z: Bit strings, shape (n, L) (or one string, (L,)).

    Returns:
        The 0/1 labels.
    """
    return (_bits(z).sum(axis=-1) == 1).astype(np.int64)


def parity(z) -> np.ndarray:
    """PARITY(z) = z_1 + … + z_L mod 2 (seed 002 §4).

    Args:
        z: Bit strings, shape (n, L) (or one string, (L,)).

    Returns:
        The 0/1 labels.
    """
    return (_bits(z).sum(axis=-1) % 2).astype(np.int64)


def contains(z, pattern: str = "101") -> np.ndarray:
    """1 iff the substring ``pattern`` (a string of '0'/'1') occurs in z (seed 002 §4, "pattern matching").

    Args:
        z: Bit strings, shape (n, L) (or one string, (L,)).
        pattern: The substring.

    Returns:
        The 0/1 labels.
    """
    if not isinstance(pattern, str) or not pattern or set(pattern) - {"0", "1"}:
        raise GflowInputError(f"`pattern` must be a non-empty string of '0' and '1', got {pattern!r}")
    z = _bits(z)
    flat = z.reshape(-1, z.shape[-1])
    found = np.array(["".join(map(str, row)).find(pattern) >= 0 for row in flat], dtype=np.int64)
    return found.reshape(z.shape[:-1])


def membership(language: str, z, *, pattern: str = "101") -> np.ndarray:
    """The 0/1 label of ``language`` (``"d_l1"``, ``"parity"``, ``"contains"``) for each string of z.

    Args:
        language: ``"d_l1"``, ``"parity"`` or ``"contains"``.
        z: Bit strings, shape (n, L).
        pattern: The substring for ``"contains"``.

    Returns:
        The 0/1 labels.
    """
    language = one_of("language", language, LANGUAGES)
    return contains(z, pattern) if language == "contains" else {"d_l1": d_l1, "parity": parity}[language](z)


def balanced_strings(seed: int, language: str, n: int, length: int, *, pattern: str = "101",
                     exclude=None) -> tuple[np.ndarray, np.ndarray]:
    """n strings of ``length`` bits with labels, exactly n/2 members and n/2 non-members (n even), shuffled.

    Members and non-members are each uniform over their strings, except the non-members of D_{L1}: half of them
    are uniform non-members (almost all have many 1s) and half "near misses" with zero or two 1s, so that the task
    is not just "few 1s vs many". ``exclude`` (an (k, L) array) lists strings that may not be drawn, when the
    language has enough strings to avoid them (used to keep test strings out of the training set); members of
    D_{L1} (only L of them) are never excluded. Returns (strings (n, L) int, labels (n,) in {0, 1}).

    Args:
        seed: An integer seed (numpy).
        language: ``"d_l1"``, ``"parity"`` or ``"contains"``.
        n: The number of strings, even.
        length: L, bits per string.
        pattern: The substring for ``"contains"``.
        exclude: Strings that may not be drawn, shape (k, L).

    Returns:
        ``(strings, labels)``, shapes (n, L) and (n,).
    """
    n, length = positive_int("n", n, minimum=2), positive_int("length", length, minimum=2)
    if n % 2:
        raise GflowInputError(f"`n` must be even for a balanced sample, got {n}")
    language = one_of("language", language, LANGUAGES)
    if length > 24:
        raise GflowInputError(f"`length` must be at most 24 (strings are enumerated), got {length}")
    rng = np.random.default_rng(seed)
    every = (np.arange(2 ** length)[:, None] >> np.arange(length)[::-1]) & 1
    labels = membership(language, every, pattern=pattern)
    banned = np.zeros(len(every), dtype=bool)
    if exclude is not None:
        ex = _bits(exclude).reshape(-1, length)
        banned[ex @ (1 << np.arange(length)[::-1])] = True
    ones = every.sum(axis=1)
    pools = {1: np.flatnonzero(labels == 1), 0: np.flatnonzero(labels == 0)}
    picked = []
    for label, pool in pools.items():
        if not (language == "d_l1" and label == 1):
            pool = pool[~banned[pool]]
        if language == "d_l1" and label == 0:
            near = pool[(ones[pool] == 0) | (ones[pool] == 2)]
            k = n // 4
            picked.append(rng.choice(near, k, replace=len(near) < k))
            pool, count = pool, n // 2 - k
        else:
            count = n // 2
        if len(pool) == 0:
            raise GflowInputError(f"no {'members' if label else 'non-members'} of {language} of length {length} left")
        picked.append(rng.choice(pool, count, replace=len(pool) < count))
    idx = rng.permutation(np.concatenate(picked))
    return every[idx], labels[idx]


def encode_strings(z, eps_x: float = 1.0) -> jax.Array:
    """Bit strings (n, L) → normalized token sequences (n, L + 2, 4) of seed 002 Def. 3.1 (module docstring).

    Args:
        z: Bit strings, shape (n, L).
        eps_x: ε_x, the scale of the true tokens.

    Returns:
        Shape (n, L + 2, 4).
    """
    z = _bits(z).reshape(-1, np.shape(z)[-1])
    eps_x = positive_float("eps_x", eps_x)
    s = math.sqrt(3.0) / 2.0
    token = np.array([[s, 0.0, 0.5, 0.0], [0.0, s, 0.5, 0.0]]) * np.array([eps_x, eps_x, eps_x, 1.0])
    bias = np.broadcast_to(np.array([0.0, 0.0, 0.0, 1.0]), (z.shape[0], 1, TOKEN_DIM))
    return jnp.asarray(np.concatenate([bias, token[z], bias], axis=1))
