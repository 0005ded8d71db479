"""Serve the SBERT demo: ``python app.py [--host HOST] [--port PORT] [--share]``.

Hugging Face Spaces runs this file as it is (``sdk: gradio``, ``app_file: app.py``) and sets
``GRADIO_SERVER_NAME``/``GRADIO_SERVER_PORT``; locally the app listens on 127.0.0.1:7860. ``--mcp``
(or ``SBERT_DEMO_MCP=1``, e.g. a Space's variable) also serves the app's tools over MCP.
"""

from __future__ import annotations

import argparse
import faulthandler
import logging
import os
import signal

if os.environ.get("SPACES_ZERO_GPU", "").lower() in ("1", "t", "true"):
    import spaces  # noqa: F401 - on ZeroGPU, before anything imports torch (sbert_demo/gpu.py)

from sbert_demo.config import quiet_libraries


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    default_host = "0.0.0.0" if os.environ.get("SPACE_ID") else "127.0.0.1"  # Spaces must listen outside
    parser = argparse.ArgumentParser(description="Serve the SBERT sentence-similarity demo.")
    parser.add_argument("--host", default=os.environ.get("GRADIO_SERVER_NAME") or default_host,
                        help="address to listen on (default: $GRADIO_SERVER_NAME, 0.0.0.0 on Spaces, else 127.0.0.1)")
    parser.add_argument("--port", type=int, default=int(os.environ.get("GRADIO_SERVER_PORT") or 7860),
                        help="port to listen on (default: $GRADIO_SERVER_PORT or 7860)")
    parser.add_argument("--share", action="store_true", help="also open a temporary public gradio.live link")
    parser.add_argument("--mcp", action="store_true", default=os.environ.get("SBERT_DEMO_MCP", "") == "1",
                        help="also serve the app's tools to AI assistants over MCP at /gradio_api/mcp/ "
                             "(default: $SBERT_DEMO_MCP=1)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per HTTP request otherwise
    quiet_libraries()
    # Gradio's own switch: how often a page's event stream is looked at while a run is under way. Its default (15 s)
    # let a run whose page had closed go on for up to 15 s before Gradio marked it gone; every 2 s, a closed page's
    # Table 1 or corpus map stops within seconds (sbert_demo.ui.page_work).
    os.environ.setdefault("GRADIO_HEARTBEAT_INTERVAL", "2")
    if hasattr(signal, "SIGUSR1"):  # `kill -USR1 <pid>`: every thread's stack to the log, for a request that hangs
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    from sbert_demo.ui.app import build_app, configure_queue, draw_first_page, launch_options

    try:
        demo = configure_queue(build_app())
    except ValueError as exc:  # settings that would share what is not a visitor's: said, and the app does not start
        raise SystemExit(f"error: {exc}") from None
    draw_first_page()  # on a prepared machine: the default page drawn before anyone can ask for it
    demo.launch(server_name=args.host, server_port=args.port, share=args.share, mcp_server=args.mcp,
                **launch_options())


if __name__ == "__main__":
    main()
