"""float64 by default: gradient flows are integrated at tolerances of 1e-8 and tighter (docs/design.md, "Numbers that must be right")."""

import jax

jax.config.update("jax_enable_x64", True)
