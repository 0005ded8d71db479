"""The Gradio web app: one module per tab, assembled by :func:`sbert_demo.ui.app.build_app`."""
