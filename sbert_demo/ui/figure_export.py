"""An "SVG" button beside the camera of every Plotly figure's toolbar, for slides and papers.

Plotly's toolbar downloads one format (``toImageButtonOptions.format``, PNG by default), and Gradio
hands a figure's config to Plotly only as JSON, so a second button with its own click handler
cannot be declared with the figure. This page script adds it: it watches the page for Plotly
figures, puts the button in each toolbar (Plotly redraws toolbars, so it is added again when
needed), and on a click sets the figure's image format to SVG for that one download by the camera
button itself (the format is read when the camera is clicked) and sets it back. The file is named
after the figure's title.
"""

from __future__ import annotations

JS = """() => {
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
}"""
