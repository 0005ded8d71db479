"""The Gradio web app: one module per tab, assembled by :func:`sbert_demo.ui.app.build_app`.

The only package that imports gradio. :mod:`.common` turns core errors into messages,
:mod:`.model_select` keeps model pickers in step with the registry, :mod:`.snippets` renders small
HTML pieces; each tab module builds its layout, then wires its events.

May import: config, shared, views, formatting, hub, plot_style, models, data, encoding, explore, benchmark, analysis, training.
"""
