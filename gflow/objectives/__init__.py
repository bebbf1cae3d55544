"""Objectives: what a model is trained on (teachers, input sequences) and the losses of a model
(docs/design.md, "Layers": teachers and objectives). Every loss is a sum of squares L = ‖r‖² of residuals r."""

from . import nonlinear_teachers as nonlinear_teachers, teachers as teachers
from ._abstract_objective import AbstractSumOfSquares as AbstractSumOfSquares
from ._empirical_loss import (
    EmpiricalLoss as EmpiricalLoss,
    FreshGaussianSequences as FreshGaussianSequences,
    gaussian_sequences as gaussian_sequences,
)
from ._input_sequence import (
    impulse as impulse,
    normalized_token_sequences as normalized_token_sequences,
    null_sequence as null_sequence,
    true_tokens as true_tokens,
    unit_ball_sequences as unit_ball_sequences,
)
from ._population_loss import PopulationLoss as PopulationLoss
from ._regular_languages import (
    balanced_strings as balanced_strings,
    encode_strings as encode_strings,
    LANGUAGES as LANGUAGES,
    membership as membership,
    TOKEN_DIM as TOKEN_DIM,
)
from ._residual_jacobian import (
    DenseResidualJacobian as DenseResidualJacobian,
    ImpulseResponseJacobian as ImpulseResponseJacobian,
)
from ._sample_loss import SampleLoss as SampleLoss
