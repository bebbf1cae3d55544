"""What a run produced: :class:`Trajectory` (one flow or discrete run), :class:`FlowBatch` (many flows), and the
files they are saved to (DESIGN.md, trajectories)."""

from ._flow_batch import FlowBatch as FlowBatch
from ._json import jsonable as jsonable
from ._legacy import convert_legacy as convert_legacy
from ._model_file import load_model as load_model, save_model as save_model
from ._provenance import (
    function_hash as function_hash,
    package_versions as package_versions,
    provenance as provenance,
    source_hash as source_hash,
)
from ._trajectory import (
    load_trajectory as load_trajectory,
    STATUSES as STATUSES,
    Trajectory as Trajectory,
)
