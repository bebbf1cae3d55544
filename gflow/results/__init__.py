"""What a run produced: :class:`Trajectory` (one flow or discrete run), :class:`FlowBatch` (many flows), and the
files they are saved to (docs/design.md, "Results and provenance")."""

from ._cache import cached_json as cached_json, load_cached_json as load_cached_json
from ._flow_batch import FlowBatch as FlowBatch
from ._json import jsonable as jsonable, write_json_atomic as write_json_atomic, write_text_atomic as write_text_atomic
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
