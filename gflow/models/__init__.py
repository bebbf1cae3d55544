"""Models: equinox modules holding parameters and a forward map on one sequence (docs/design.md, "Layers": models).

Every recurrent network is a :class:`AbstractRNN`; a model is integrated as the flat vector θ of its
floating-point arrays (:func:`flatten`, :func:`unflatten`).
"""

from . import initializers as initializers
from ._abstract_rnn import AbstractRNN as AbstractRNN
from ._activations import Activation as Activation, ACTIVATIONS as ACTIVATIONS
from ._elman_rnn import ElmanRNN as ElmanRNN
from ._elman_settings import (
    elman_allen_zhu_li as elman_allen_zhu_li,
    elman_cayci_eryilmaz as elman_cayci_eryilmaz,
    elman_panigrahi_goyal as elman_panigrahi_goyal,
    theory_output_scale as theory_output_scale,
)
from ._flatten import evaluate_rows as evaluate_rows, flatten as flatten, unflatten as unflatten
from ._frozen import Frozen as Frozen
from ._gated_rnn import GatedRNN as GatedRNN
from ._gru import GRU as GRU, gru as gru
from ._impulse_response import krylov_sequence as krylov_sequence
from ._linear_rnn import LinearRNN as LinearRNN
from ._lstm import LSTM as LSTM, lstm as lstm
