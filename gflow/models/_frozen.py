"""Fixed (untrained) layers: seed 002 keeps the readout B at its initialization, seed 004 keeps A and B, seed 003
keeps the readout c.

gflow trains exactly the inexact (floating-point) arrays of a model: :func:`gflow.solve_flow`, the discrete runners
and the analysis split a model with ``eqx.partition(model, eqx.is_inexact_array)``. A :class:`Frozen` array keeps
its float64 value as the raw bits of an int64 array, which is not inexact, so it lands in the static part of that
split: it is not a coordinate of the flow, costs no Jacobian columns and is saved and batched like any other leaf.
``.value`` decodes it bit for bit and stops gradients, so a stray differentiation cannot move it either.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from .._checks import GflowInputError

_INTEGER_OF = {2: jnp.int16, 4: jnp.int32, 8: jnp.int64}
_FLOAT_OF = {2: jnp.float16, 4: jnp.float32, 8: jnp.float64}


class Frozen(eqx.Module):
    """A floating-point array that training leaves alone; read it with ``.value``.

    Its bits are stored as an integer array, so gradient flow, the discrete runners and
    [`flatten`][gflow.models.flatten] (which take only inexact arrays) never see it as a coordinate.
    """

    bits: jax.Array

    def __init__(self, value):
        """Freeze ``value``.

        Args:
            value: An array (an integer one is cast to float).

        Raises:
            GflowInputError: A dtype that cannot be stored bit for bit.
        """
        # on the host when ``value`` is not traced: the same bits, without compiling two small programs
        xp = jnp if isinstance(value, jax.core.Tracer) else np
        value = xp.asarray(value)
        if not jnp.issubdtype(value.dtype, jnp.floating):
            value = value.astype(jnp.result_type(float))
        if value.dtype.itemsize not in _INTEGER_OF:
            raise GflowInputError(f"`value` of dtype {value.dtype} cannot be frozen")
        integer = _INTEGER_OF[value.dtype.itemsize]
        self.bits = (jax.lax.bitcast_convert_type(value, integer) if xp is jnp
                     else jnp.asarray(np.array(value, order="C").view(integer)))

    @property
    def value(self) -> jax.Array:
        """The array, exactly as given, with gradients stopped."""
        value = jax.lax.bitcast_convert_type(self.bits, _FLOAT_OF[np.dtype(self.bits.dtype).itemsize])
        return jax.lax.stop_gradient(value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.bits.shape

    @property
    def ndim(self) -> int:
        return len(self.bits.shape)


def unfrozen(x) -> jax.Array:
    """The array behind ``x``.

    Args:
        x: An array or a [`Frozen`][gflow.models.Frozen] one.

    Returns:
        ``x.value`` for a Frozen array, ``x`` itself otherwise.
    """
    return x.value if isinstance(x, Frozen) else x


def trained_layers(trained, layers: tuple[str, ...]) -> tuple[str, ...]:
    """The layers to train, checked against the model's layers.

    Args:
        trained: One layer name or several.
        layers: The model's layer names.

    Returns:
        The names as a tuple.

    Raises:
        GflowInputError: No name, a repeated name, or a name that is not a layer.
    """
    trained = (trained,) if isinstance(trained, str) else tuple(trained)
    if not trained or any(name not in layers for name in trained) or len(set(trained)) != len(trained):
        raise GflowInputError(f"`trained` must name one or more distinct layers of {layers}, got {trained!r}")
    return trained
