"""The source papers' problems, importable: teachers, losses, initializations, students, sweep helpers, measures
and the papers' figures that the studies, bench/ and the tests share (one module per problem; import the module you
need, e.g. ``from gflow.problems import ssm_poisoning``). A problem module may build on every layer that integrates or
analyses (models, objectives, results, flow, discrete, sweep, analysis) and draws its figures with gflow.plot
(imported inside the figure functions, so that importing a problem does not import matplotlib); never on gflow.study:
a figure function returns the figure, and the study saves it.

- :mod:`gflow.problems.ssm_poisoning`: Slutzky et al. (NeurIPS 2025) §4.2, the diagonal SSM whose implicit bias a
  clean-label sequence poisons;
- :mod:`gflow.problems.extrapolation`: seed 000's extrapolation panels (Sec. 5, App. B, C): teachers and students by
  name, one sweep per panel, errors read at loss levels;
- :mod:`gflow.problems.gru_extrapolation`: seed 000's GRU teacher (App. C.2.3) and seed 001's memory teachers and
  error measures (§7, App. D);
- :mod:`gflow.problems.lazy_width`: the tasks, models and lazy-training measures of seeds 002, 003, 004;
- :mod:`gflow.problems.regular_language`: seed 002's regular languages, split into training and test strings;
- and a module named after each other study whose problem it holds (:mod:`gflow.problems.memoryless`,
  :mod:`gflow.problems.random_init`, :mod:`gflow.problems.memory_cutoff`, …).
"""
