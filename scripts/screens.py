"""Screenshots of the app as people see it, at a laptop, a projector and a phone size.

    .venv/bin/python scripts/screens.py [--url http://127.0.0.1:7860/] [--out docs/screens] [--only table1,cost,talk]

Without ``--url`` the app is started here (``app.py`` on a free port, with the environment as it is:
set ``SBERT_DEMO_CACHE`` to a warm cache to skip the first runs). Each view is opened by its deep
link, its main button pressed and its result awaited, then the viewport (not the whole page) is
saved as ``<view>-<width>x<height>.jpg``; the presenter view's steps as ``talk-<n>-1280x720.jpg`` (the
room step's QR code as ``talk-8-qr-1280x720.jpg``); an
audience board as ``board-presenter-1280x720.jpg`` and ``board-phone-390x844.jpg``.
Needs Chromium (``apt-get install chromium``) and the ``playwright`` package (no browser download).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SIZES = {"laptop": (1366, 768), "projector": (1280, 720), "phone": (390, 844)}
TALK_STEPS = 8
TWO_FIGURES = (2, 5, 8)  # the presenter steps with a figure on each side
ROOM_STEP = 8  # the room's own sentences: a board started on the step, the ROOM sentences sent to it

# view: (deep link, button to press or None, JavaScript that is true once the result is on the page)
VIEWS = {
    "explore": ("?tab=explore&set=paraphrase-questions&models=glove-6b-50d,all-MiniLM-L6-v2", "#explore-run",
                "document.querySelectorAll('.map .js-plotly-plot').length >= 2"),
    "sts": ("?tab=sts&models=glove-6b-50d,all-MiniLM-L6-v2", "#sts-run",
            "document.querySelectorAll('.sts-scatter .js-plotly-plot').length === 2"),
    "table1": ("?tab=table1&models=glove-6b-50d,glove-6b-50d%2Bwhiten,all-MiniLM-L6-v2", "#table1-run",
               "document.querySelectorAll('#table1-heatmap .js-plotly-plot').length === 1"),
    "cost": ("?tab=cost", "#cost-run", "document.querySelectorAll('#cost-plot .js-plotly-plot').length === 1"),
    "why": ("?tab=why", None, None),
    "train": ("?tab=train", None, None),
    "models": ("?tab=models", None, None),
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_app() -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "app.py", "--port", str(port)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2)
            return server, url
        except OSError:
            time.sleep(1)
    server.kill()
    raise SystemExit("The app did not answer within 3 minutes.")


def shoot_view(browser, url: str, name: str, size: tuple[int, int], out: Path, phone: bool) -> Path:
    link, button, done = VIEWS[name]
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, has_touch=phone,
                                  is_mobile=phone, device_scale_factor=2 if phone else 1)
    page = context.new_page()
    page.set_default_timeout(600_000)
    page.goto(url + link)
    page.wait_for_selector("#explore-run", state="attached")
    page.wait_for_timeout(2500)  # the link's tab is selected and its pickers filled
    if button:
        page.locator(button).scroll_into_view_if_needed()
        page.click(button)
        page.wait_for_function(done)
        page.wait_for_timeout(1500)  # Plotly's last draw
    path = out / f"{name}-{size[0]}x{size[1]}.jpg"
    page.screenshot(path=str(path), type="jpeg", quality=70)
    context.close()
    return path


def shoot_talk(browser, url: str, size: tuple[int, int], out: Path) -> list[Path]:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = context.new_page()
    page.set_default_timeout(900_000)
    page.goto(url + "?view=talk")
    page.wait_for_function("document.body.classList.contains('talk-mode')")
    page.wait_for_selector("#talk-next", state="visible")
    paths = []
    for step in range(1, TALK_STEPS + 1):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"document.querySelector('#talk-title').innerText.includes('{step} / {TALK_STEPS}')")
        plot = "#talk-right" if step in TWO_FIGURES else "#talk-left"
        if step == ROOM_STEP:
            paths.append(start_room(page, url, out / f"talk-{step}-qr-{size[0]}x{size[1]}.jpg"))
        page.wait_for_function(f"document.querySelectorAll('{plot} .js-plotly-plot').length === 1")
        if step == ROOM_STEP:
            page.wait_for_function(f"document.querySelector('#talk-room').innerText.includes('{len(ROOM)} sentences')")
        if step == ROOM_STEP - 1:  # the live training run: wait for its result line
            page.wait_for_function("document.querySelector('#talk-caption').innerText.includes('after')")
        page.wait_for_timeout(1500)
        paths.append(out / f"talk-{step}-{size[0]}x{size[1]}.jpg")
        page.screenshot(path=str(paths[-1]), type="jpeg", quality=70)
    context.close()
    return paths


def start_room(page, url: str, path: Path) -> Path:
    """The room step: Start a board, the QR code of its join link on the screen (saved to ``path``), Q
    to hide it, then the ROOM sentences sent from ten sessions."""
    from gradio_client import Client

    page.click("#talk-room-start")
    page.wait_for_selector("#talk-qr img.qr", state="visible")
    page.wait_for_timeout(500)
    page.screenshot(path=str(path), type="jpeg", quality=70)
    code = page.inner_text("#talk-qr").strip().rsplit("/join/", 1)[1]
    page.keyboard.press("q")
    for sentence in ROOM:
        Client(url, verbose=False).predict(code, sentence, api_name="/board_send")
    return path


ROOM = ["How do I renew my passport?", "Where can I get a new passport?", "My passport expired last week.",
        "I love pizza with cheese.", "Pasta is my favourite food.", "What's the best pizza in town?",
        "Will it rain tomorrow?", "Is it going to be sunny?", "The weather is nice today.",
        "I could eat spaghetti every day."]


def shoot_board(browser, url: str, out: Path) -> list[Path]:
    """An audience board: ten sentences from ten sessions, then a phone sends one; the presenter's
    board (1280x720, presenter view) and the phone's join page (/join/CODE, 390x844) with where it landed."""
    from gradio_client import Client

    made = Client(url, verbose=False).predict("all-MiniLM-L6-v2", api_name="/board_create")
    for sentence in ROOM:
        Client(url, verbose=False).predict(made["code"], sentence, api_name="/board_send")
    presenter = browser.new_context(viewport={"width": 1280, "height": 720}).new_page()
    presenter.set_default_timeout(300_000)
    presenter.goto(made["presenter_link"] + "&view=talk")
    presenter.wait_for_selector("#board-map .js-plotly-plot")
    phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True,
                                device_scale_factor=2).new_page()
    phone.set_default_timeout(120_000)
    phone.goto(made["join_link"])
    phone.wait_for_selector("#join-send", state="visible")
    phone.fill("#join-sentence", "Can I renew my passport online?")
    phone.locator("#join-send").tap()
    phone.wait_for_function("document.querySelector('#join-landed').innerText.includes('For now')")
    paths = [out / "board-phone-390x844.jpg", out / "board-presenter-1280x720.jpg"]
    phone.screenshot(path=str(paths[0]), type="jpeg", quality=70)
    presenter.wait_for_function("document.querySelector('#board-summary').innerText.includes('11 sentences')")
    presenter.wait_for_timeout(1500)
    presenter.screenshot(path=str(paths[1]), type="jpeg", quality=70)
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app (default: start one here)")
    parser.add_argument("--out", default=str(REPO / "docs" / "screens"))
    parser.add_argument("--only", help=f"comma-separated views among {', '.join(VIEWS)}, talk, board")
    parser.add_argument("--sizes", default="laptop,projector,phone", help=f"among {', '.join(SIZES)}")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = args.only.split(",") if args.only else [*VIEWS, "talk", "board"]
    server, url = (None, args.url.rstrip("/") + "/") if args.url else start_app()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
            for size_name in args.sizes.split(","):
                size = SIZES[size_name]
                for name in wanted:
                    if name == "board":  # an audience board: the presenter's projector and a phone
                        if size_name == "projector":
                            print(*shoot_board(browser, url, out), sep="\n")
                        continue
                    if name == "talk":  # the presenter view is for projectors
                        if size_name == "projector":
                            print(*shoot_talk(browser, url, size, out), sep="\n")
                        continue
                    if size_name != "projector":  # the tabs: a laptop and a phone
                        print(shoot_view(browser, url, name, size, out, phone=size_name == "phone"))
            browser.close()
    finally:
        if server is not None:
            server.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
