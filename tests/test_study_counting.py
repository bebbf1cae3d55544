"""Statistics that fit the data (gflow.study): the exact Clopper–Pearson interval of 0/1 outcomes, k-of-n and
existence checks decided by it, and seed averages held to the paper's number of seeds. Each decision is shown on
its negative control: the outcome that must not pass."""

import numpy as np
import pytest
from scipy import stats

from gflow.study import bootstrap_interval, clopper_pearson, decide, exists_in, k_of_n, seed_average, student_t_interval


def _flags(k, n):
    return [True] * k + [False] * (n - k)


def test_clopper_pearson_known_values():
    lo, hi = clopper_pearson(10, 10)
    assert lo == pytest.approx(0.6915, abs=1e-4) and hi == 1.0  # 0.025 ** (1 / 10)
    assert clopper_pearson(0, 10) == (0.0, pytest.approx(0.3085, abs=1e-4))
    assert bootstrap_interval([1.0] * 10, "mean") == (1.0, 1.0)  # the degenerate interval it replaces
    for k, n in [(0, 1), (1, 1), (3, 7), (5, 10), (17, 20), (29, 30), (0, 50)]:
        for alternative in ("two-sided", "greater", "less"):
            ci = stats.binomtest(k, n, alternative=alternative).proportion_ci(0.9, method="exact")
            assert clopper_pearson(k, n, 0.9, alternative=alternative) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert clopper_pearson(10, 10, alternative="greater")[0] == pytest.approx(0.05 ** (1 / 10))


@pytest.mark.parametrize("args", [(1.0, 10), (True, 10), (3, 2), (-1, 5), (0, 0), (1, 5, 1.0), (1, 5, 0.0)])
def test_clopper_pearson_refuses_bad_input(args):
    with pytest.raises(ValueError, match="clopper_pearson"):
        clopper_pearson(*args)
    with pytest.raises(ValueError, match="alternative"):
        clopper_pearson(1, 5, alternative="two_sided")


def test_k_of_n_decides_by_the_exact_interval():
    # negative control: 10 of 10 seeds do not show a rate >= 0.75 (lower end 0.69)
    ten = k_of_n("most seeds", "src", _flags(10, 10), 0.75, predictions=["X-1"])
    assert ten["status"] == "inconclusive" and not ten["passed"] and ten["interval"][0] < 0.75
    assert (ten["k"], ten["n"], ten["fraction"], ten["statistic"]) == (10, 10, 1.0, "clopper_pearson")
    assert ten["seeds_needed"] == 13  # 13 of 13: 0.025 ** (1/13) = 0.753 >= 0.75; 12 of 12 gives 0.735
    assert k_of_n("c", "s", _flags(13, 13), 0.75)["status"] == "pass"
    assert k_of_n("c", "s", _flags(12, 12), 0.75)["status"] == "inconclusive"
    for k in (28, 29, 30):
        assert k_of_n("c", "s", _flags(k, 30), 0.75)["status"] == "pass"
    assert k_of_n("c", "s", _flags(5, 10), 0.75)["status"] == "inconclusive"  # upper end 0.81
    four = k_of_n("c", "s", _flags(4, 10), 0.75)  # upper end 0.74
    assert four["status"] == "FAIL" and four["interval"][1] < 0.75 and "seeds_needed" not in four
    assert k_of_n("c", "s", _flags(0, 30), 0.25, direction="<=")["status"] == "pass"  # upper end 0.116
    assert k_of_n("c", "s", _flags(15, 30), 0.5)["seeds_needed"] is None  # on the bar: no n decides
    by_seed = k_of_n("c", "s", {3: True, 5: np.bool_(False), 8: True}, 0.5)
    assert by_seed["seeds"] == [3, 5, 8] and by_seed["outcomes"] == [True, False, True] and by_seed["k"] == 2


@pytest.mark.parametrize("outcomes, p", [([], 0.5), ([1, 0], 0.5), ([True], 1.5), ("yes", 0.5)])
def test_k_of_n_refuses_bad_input(outcomes, p):
    with pytest.raises(ValueError):
        k_of_n("c", "s", outcomes, p)


def test_existence_is_k_of_n_and_can_fail():
    one = exists_in("some student decays", "Fig. 5", {s: s == 7 for s in range(10)}, 0.1)
    assert one["any_seed"] and one["status"] == "inconclusive"  # the trivial reading (k >= 1) would pass
    assert one["reading"] == "existence" and one["k"] == 1 and one["n"] == 10
    assert exists_in("c", "s", _flags(0, 36), 0.1)["status"] == "FAIL"  # upper end 0.097
    assert exists_in("c", "s", _flags(0, 10), 0.1)["seeds_needed"] == 36
    assert exists_in("c", "s", _flags(5, 10), 0.1)["status"] == "pass"


def test_seed_average_keeps_the_papers_n_and_the_spread():
    with pytest.raises(ValueError, match="averages 3 seeds"):
        seed_average("c", "s", [1.0, 2.0, 3.0, 4.0], 0.0, ">=", paper_n=3)
    with pytest.raises(ValueError, match="paper_n"):
        seed_average("c", "s", [1.0], 0.0, ">=", paper_n=1)
    wide = seed_average("c", "s", {0: 1.0, 1: 4.0, 2: 2.0, 3: 3.0}, 0.0, ">=", paper_n=3, allow_other_n=True)
    assert (wide["n"], wide["paper_n"], wide["seeds"], wide["values"]) == (4, 3, [0, 1, 2, 3], [1.0, 4.0, 2.0, 3.0])
    assert (wide["min"], wide["median"], wide["max"], wide["value"]) == (1.0, 2.5, 4.0, 2.5)
    assert wide["interval"] == pytest.approx(stats.t.interval(0.95, 3, loc=2.5, scale=stats.sem([1, 4, 2, 3])))
    assert wide["status"] == decide(wide["interval"], 0.0, ">=") == "pass"
    assert student_t_interval([1.0, 4.0, 2.0, 3.0]) == pytest.approx(wide["interval"])
    # negative control: three seeds split around the bar (mean 0.6 vs 0.5) decide nothing, and an average
    # clearly below it FAILs
    split = seed_average("c", "s", [0.2, 1.0, 0.6], 0.5, ">=", paper_n=3)
    assert split["status"] == "inconclusive" and split["seeds_needed"] > 3
    assert seed_average("c", "s", [0.1, 0.12, 0.11], 0.5, ">=", paper_n=3)["status"] == "FAIL"
    assert seed_average("c", "s", [0.5, 0.52, 0.51], [0.4, 0.6], "in", paper_n=3)["status"] == "pass"
