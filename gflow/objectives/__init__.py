"""Objectives: what a model is trained on (teachers, input sequences) and the losses of a model
(DESIGN.md, second and third layers). Every loss is a sum of squares L = ‖r‖² of residuals r."""

from . import nonlinear_teachers as nonlinear_teachers
from . import teachers as teachers
from ._empirical_loss import (
    EmpiricalLoss as EmpiricalLoss,
)
from ._empirical_loss import (
    FreshGaussianSequences as FreshGaussianSequences,
)
from ._empirical_loss import (
    gaussian_sequences as gaussian_sequences,
)
from ._input_sequence import (
    impulse as impulse,
)
from ._input_sequence import (
    normalized_token_sequences as normalized_token_sequences,
)
from ._input_sequence import (
    null_sequence as null_sequence,
)
from ._input_sequence import (
    true_tokens as true_tokens,
)
from ._input_sequence import (
    unit_ball_sequences as unit_ball_sequences,
)
from ._population_loss import PopulationLoss as PopulationLoss
from ._regular_languages import (
    balanced_strings as balanced_strings,
)
from ._regular_languages import (
    encode_strings as encode_strings,
)
from ._regular_languages import (
    LANGUAGES as LANGUAGES,
)
from ._regular_languages import (
    membership as membership,
)
from ._regular_languages import (
    TOKEN_DIM as TOKEN_DIM,
)
from ._residual_jacobian import (
    DenseResidualJacobian as DenseResidualJacobian,
)
from ._residual_jacobian import (
    ImpulseResponseJacobian as ImpulseResponseJacobian,
)
from ._sample_loss import SampleLoss as SampleLoss
