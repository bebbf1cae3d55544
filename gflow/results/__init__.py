"""What a run produced: :class:`Trajectory` (one flow or discrete run), :class:`FlowBatch` (many flows), and the
files they are saved to (DESIGN.md, trajectories)."""

from ._flow_batch import FlowBatch as FlowBatch
from ._json import jsonable as jsonable
from ._trajectory import (
    load_trajectory as load_trajectory,
)
from ._trajectory import (
    package_versions as package_versions,
)
from ._trajectory import (
    STATUSES as STATUSES,
)
from ._trajectory import (
    Trajectory as Trajectory,
)
