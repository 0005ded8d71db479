"""The Gradio web app: one module per tab, assembled by :func:`sbert_demo.ui.app.build_app`.

The only package that imports gradio. :mod:`.common` turns core errors into messages (the one
place), :mod:`.model_select` keeps model pickers in step with the registry (offering what a view's
capability needs), :mod:`.snippets` renders small HTML pieces (escaping every table cell in
:func:`~.snippets.html_table`), :mod:`.page_assets` reads the stylesheet, page script and fixed HTML
kept as files in ``assets/``; each tab module builds its layout, then wires its events, and keeps
its handlers thin: one core call each.

May import: config, shared, views, formatting, hub, plot_style, models, data, encoding, explore, benchmark, analysis, training, audience, talk, corpus, gpu, atlas.
"""
