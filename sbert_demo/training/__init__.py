"""Training SBERT models the way Reimers & Gurevych (2019) do, from the CLI and the web app.

* :mod:`.settings` — :class:`TrainConfig`, defaults per device, validation;
* :mod:`.naming` — safe model names; :mod:`.saving` — atomic save with a model card;
* :mod:`.objectives` — data and loss per objective; :mod:`.model_factory` — the model to train;
* :mod:`.arguments` — device, precision and schedule as Trainer arguments;
* :mod:`.trainer` — ``SentenceTransformerTrainer`` + the live-progress/cancel callback;
* :mod:`.runner` — one run, in-process; :mod:`.jobs` — one background run for the web app, in a
  :mod:`.worker` process, seen through :mod:`.job_state` snapshots; :mod:`.reporting` — events;
* :mod:`.estimate` — how long a run will take; :mod:`.cli` — ``python -m sbert_demo train``.

Importing this package is cheap (no torch): the heavy modules load when a run starts.
"""

from .arguments import device_label
from .estimate import estimate, estimate_seconds
from .jobs import DISABLED, JobSnapshot, TrainingJobs, training_jobs
from .naming import sanitize_model_name
from .settings import OBJECTIVE_LABELS, OBJECTIVES, TrainConfig, config_for, defaults_for

__all__ = [
    "DISABLED",
    "OBJECTIVES",
    "OBJECTIVE_LABELS",
    "device_label",
    "estimate",
    "JobSnapshot",
    "TrainConfig",
    "TrainingJobs",
    "config_for",
    "defaults_for",
    "estimate_seconds",
    "sanitize_model_name",
    "training_jobs",
]
