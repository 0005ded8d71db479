"""The live training-curve figure of the Train tab: loss and STSb-dev Spearman against the step.

A pure function of the numbers a job reports (:class:`~sbert_demo.training.jobs.JobSnapshot`).
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from ..plot_style import FAMILY_COLORS, apply_style, check_length


def training_curves(
    loss_steps: Sequence[int],
    losses: Sequence[float],
    eval_steps: Sequence[int],
    eval_spearman: Sequence[float],
    title: str = "",
) -> go.Figure:
    """Training loss (left axis) and STSb-dev Spearman x 100 (right axis) against the step.

    ``eval_spearman`` is expected already multiplied by 100. Empty lists give empty axes.
    """
    check_length("loss values", losses, len(loss_steps))
    check_length("Spearman values", eval_spearman, len(eval_steps))
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=list(loss_steps), y=list(losses), mode="lines", name="training loss",
        line=dict(color=FAMILY_COLORS["naive"], width=2),
        hovertemplate="step %{x}<br>loss: %{y:.4f}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=list(eval_steps), y=list(eval_spearman), mode="lines+markers", yaxis="y2",
        name="STSb dev Spearman x 100", line=dict(color=FAMILY_COLORS["fine-tuned"], width=2),
        hovertemplate="step %{x}<br>Spearman x 100: %{y:.2f}<extra></extra>",
    ))
    last = max([*loss_steps, *eval_steps, 1])
    fig.update_layout(  # the x axis starts a little before 0: its "0" and the loss axis's "0" stay apart
        xaxis=dict(title=dict(text="training step"), range=[-0.04 * last, 1.02 * last]),
        yaxis=dict(title=dict(text="loss"), rangemode="tozero"),
        yaxis2=dict(title=dict(text="STSb dev Spearman x 100"), overlaying="y", side="right",
                    showgrid=False, tickmode="auto"),  # a 2-3 point curve would repeat whole-number ticks
        legend=dict(orientation="h", y=-0.2),
    )
    if not len(loss_steps) and not len(eval_steps):
        fig.add_annotation(text="No training steps logged yet.", showarrow=False,
                           x=0.5, y=0.5, xref="paper", yref="paper", font=dict(color="#777"))
    apply_style(fig, title or "Training progress")
    fig.update_layout(margin=dict(r=70, b=90))
    return fig
