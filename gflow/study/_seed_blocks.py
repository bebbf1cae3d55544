"""Seed blocks: the seeds a study runs on, by block.

A check written or changed after its study had been run decides only on a *confirmatory* block of seeds never used
before (``validation/registry.toml``: ``registered_after_run``, ``confirmatory_seeds``); the *exploratory* block
0, 1, … is the one the study was first run on. A study declares its confirmatory block once (:class:`SeedBlocks`),
takes ``--seeds-block`` and runs on :meth:`SeedBlocks.seeds`; the block is recorded
in the run's config (``seeds_block``), and a run on the confirmatory block records its own result file.
"""

from __future__ import annotations

from typing import NamedTuple

from .._checks import GflowInputError

EXPLORATORY, CONFIRMATORY = "exploratory", "confirmatory"
SEEDS_BLOCKS = (EXPLORATORY, CONFIRMATORY)


class SeedBlocks(NamedTuple):
    """A study's two seed blocks: 0, 1, … (exploratory) and ``first``, ``first + 1``, … (confirmatory, ``size``
    seeds at most), disjoint: an exploratory run may not reach ``first``.

    Attributes:
        first: the confirmatory block's first seed.
        size: how many seeds the confirmatory block declares.
        exploratory_max: the most seeds an exploratory run may take (default ``first``; less where a study derives
            other keys from a seed that must stay clear of the confirmatory block's).
    """

    first: int
    size: int
    exploratory_max: int | None = None

    @property
    def confirmatory(self) -> list[int]:
        """Every seed of the confirmatory block."""
        return list(range(self.first, self.first + self.size))

    def seeds(self, block: str, n: int) -> list[int]:
        """The first ``n`` seeds of ``block``.

        Args:
            block: ``"exploratory"`` or ``"confirmatory"``.
            n: the number of seeds.

        Returns:
            The seeds.

        Raises:
            GflowInputError: for another block, or an ``n`` that would leave the block.
        """
        if block not in SEEDS_BLOCKS:
            raise GflowInputError(f"--seeds-block must be one of {SEEDS_BLOCKS}, got {block!r}")
        if block == CONFIRMATORY:
            if n > self.size:
                raise GflowInputError(f"--seeds must be at most {self.size} with --seeds-block {CONFIRMATORY} (the "
                                      f"declared block {self.first} … {self.first + self.size - 1}), got {n}")
            return list(range(self.first, self.first + n))
        most = self.first if self.exploratory_max is None else self.exploratory_max
        if n > most:
            raise GflowInputError(f"--seeds must be at most {most} in the {EXPLORATORY} block (it would reach the "
                                  f"{CONFIRMATORY} block {self.first} …), got {n}")
        return list(range(n))
