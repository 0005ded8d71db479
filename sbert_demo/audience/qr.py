"""A QR code of a link, drawn offline with segno (pure Python), as an SVG ``<img>`` for the page.

Example::

    >>> html = qr_image("http://127.0.0.1:7860/?board=ABCDE", "Join the board")
    >>> html.startswith('<img class="qr" alt="Join the board" src="data:image/svg+xml;base64,')
    True
"""

from __future__ import annotations

import base64
import html
import io


def qr_svg(link: str) -> str:
    """The QR code of ``link`` as SVG text (error correction M: a slide photographed at an angle still reads)."""
    import segno

    buffer = io.BytesIO()
    segno.make(link, error="m", micro=False).save(buffer, kind="svg", scale=8, border=2, dark="#111", light="#fff")
    return buffer.getvalue().decode("utf-8")


def qr_image(link: str, alt: str) -> str:
    """An ``<img>`` with the QR code of ``link`` inline (no file, no network)."""
    data = base64.b64encode(qr_svg(link).encode("utf-8")).decode("ascii")
    return f'<img class="qr" alt="{html.escape(alt)}" src="data:image/svg+xml;base64,{data}">'
