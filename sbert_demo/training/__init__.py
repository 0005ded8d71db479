"""Training SBERT models the way Reimers & Gurevych (2019) do, from the CLI and the web app.

* :mod:`.settings` — :class:`TrainConfig`, defaults per device, validation, device and precision;
* :mod:`.saving` — safe model names, atomic save with a model card;
* :mod:`.objectives` — data and loss per objective; :mod:`.model_factory` — the model to train;
* :mod:`.arguments` — the schedule (steps, warm-up, evaluations) as Trainer arguments;
* :mod:`.trainer` — ``SentenceTransformerTrainer`` + the live-progress/cancel callback;
* :mod:`.runner` — one run, in-process; :mod:`.jobs` — one background run for the web app, in a
  :mod:`.worker` process, seen through :mod:`.job_state` snapshots; :mod:`.reporting` — events;
* :mod:`.estimate` — how long a run will take; :mod:`.curves` — the live training-curve figure.

Importing this package is cheap (no torch): the heavy modules load when a run starts. The
command line (``python -m sbert_demo train``) is :mod:`sbert_demo.cli.train`.

May import: config, shared, views, formatting, hub, plot_style, models, data, encoding, benchmark, gpu.
"""

from .estimate import estimate, estimate_seconds
from .jobs import DISABLED, JobSnapshot, TrainingJobs, training_jobs
from .saving import sanitize_model_name
from .settings import OBJECTIVE_LABELS, OBJECTIVES, TrainConfig, config_for, defaults_for, device_label

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
