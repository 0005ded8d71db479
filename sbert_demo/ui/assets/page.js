() => {
  // The page's script, run once when the app has loaded (Blocks.launch(js=...)): the presenter
  // view's keys, and an SVG button beside the camera of every Plotly figure's toolbar.
  const talkKeys = () => {
    if (new URLSearchParams(window.location.search).get("view") === "talk") {
      document.body.classList.add("talk-mode");
    }
    document.addEventListener("keydown", (event) => {
      const talk = document.querySelector("#talk-next");
      if (!talk || talk.offsetParent === null) { return; }  // only while the Talk tab is shown
      const typing = ["INPUT", "TEXTAREA"].includes(document.activeElement?.tagName);
      if (typing) { return; }
      if (["ArrowRight", "PageDown", "n", "N"].includes(event.key)) { talk.click(); event.preventDefault(); }
      if (["ArrowLeft", "PageUp", "p", "P"].includes(event.key)) {
        document.querySelector("#talk-back")?.click(); event.preventDefault();
      }
    });
  };
  const svgButtons = () => {
    // Plotly's toolbar downloads one format, and Gradio hands a figure's config to Plotly only as
    // JSON, so a second button cannot be declared with the figure: it is added here to every toolbar
    // (again when Plotly redraws one), and on a click sets the camera's format to SVG for that one
    // download and back. The file is named after the figure's title.
    const ICON = '<svg viewBox="0 0 24 24" height="1em" width="1em" class="icon"><text x="12" y="16" ' +
      'font-size="9" font-weight="700" text-anchor="middle" font-family="sans-serif">SVG</text></svg>';
    const fileName = (gd) => {
      const title = (gd.layout && gd.layout.title && (gd.layout.title.text || gd.layout.title)) || "figure";
      const text = String(title).replace(/<[^>]*>/g, " ").replace(/&[a-z#0-9]+;/gi, " ");
      return text.replace(/[^A-Za-z0-9._-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 80) || "figure";
    };
    const addButton = (gd) => {
      const camera = gd.querySelector('.modebar-btn[data-title^="Download plot"]');
      if (!camera || camera.parentElement.querySelector(".svg-download")) { return; }
      const button = document.createElement("a");
      button.className = "modebar-btn svg-download";
      button.setAttribute("rel", "tooltip");
      button.setAttribute("data-title", "Download plot as SVG");
      button.innerHTML = ICON;
      button.addEventListener("click", () => {
        const context = gd._context || {};
        const before = context.toImageButtonOptions;
        context.toImageButtonOptions = Object.assign({}, before, {format: "svg", filename: fileName(gd)});
        try { camera.click(); } finally { context.toImageButtonOptions = before; }
      });
      camera.parentElement.appendChild(button);
    };
    let pending = false;
    const scan = () => {
      pending = false;
      document.querySelectorAll(".js-plotly-plot").forEach(addButton);
    };
    new MutationObserver(() => {
      if (!pending) { pending = true; requestAnimationFrame(scan); }
    }).observe(document.body, {childList: true, subtree: true});
    scan();
  };
  talkKeys();
  svgButtons();
}
