() => {
  // The page's script, run once when the app has loaded (Blocks.launch(js=...)): the modes a link
  // asks for (presenter view, join page, presenter's board), the presenter view's keys and fit to the screen, an SVG button beside the camera of every Plotly figure's toolbar,
  // and heatmap cell numbers only where the cells can hold them.
  const talkFit = () => {
    // In the presenter view every figure is as tall as the room left under the step's text, so a
    // step fits the screen with no scrolling at any projector or laptop size; again after each new
    // figure, a resize and entering or leaving full screen. On a phone (a speaker's remote) the
    // page scrolls and figures keep a readable height.
    if (!document.body.classList.contains("talk-mode") || !window.Plotly) { return; }
    const plots = [...document.querySelectorAll("#talk-left .js-plotly-plot, #talk-right .js-plotly-plot")]
      .filter((gd) => gd.offsetParent !== null && gd.layout && gd.layout.height);
    const tabs = document.getElementById("main-tabs");
    if (!plots.length || !tabs) { return; }
    if (window.innerWidth < 640) { return; }  // a phone scrolls: its figures keep the height drawn for it
    // What is below the tabs on this page: the main column's bottom padding (16 px) and a margin.
    const spare = window.innerHeight - 24 - (tabs.getBoundingClientRect().bottom + window.scrollY);
    const tallest = Math.max(...plots.map((gd) => gd.layout.height));  // the row is as tall as its tallest
    const height = Math.max(240, Math.floor(tallest + spare));
    plots.forEach((gd) => {
      if (Math.abs(gd.layout.height - height) > 3) { window.Plotly.relayout(gd, {height: height}); }
    });
  };
  let fitPending = false;
  const scheduleFit = () => {
    if (!fitPending) { fitPending = true; requestAnimationFrame(() => { fitPending = false; talkFit(); }); }
  };
  window.sbertDemoPresent = () => {
    // The Talk tab's Present button: the presenter view on this page (and full screen where allowed).
    const on = document.body.classList.toggle("talk-mode");
    if (on && !document.fullscreenElement) { document.documentElement.requestFullscreen?.().catch(() => {}); }
    if (!on && document.fullscreenElement) { document.exitFullscreen?.().catch(() => {}); }
    scheduleFit();
  };
  window.sbertDemoQr = (mode) => {
    // The presenter view's QR code over the step, and away again (the QR button, or Q); "show": over
    // the step whatever it was (a board just started for the room).
    if (mode === "show") { document.body.classList.add("show-qr"); } else { document.body.classList.toggle("show-qr"); }
  };
  const TALK_STEPS = 8;  // sbert_demo/talk/story.py's STEPS
  window.sbertDemoMove = (step, delta) => {
    // The presenter view's Back and Next (ui/talk.py's move): from the title slide Next opens step 1.
    const current = Number.isInteger(step) ? step : (delta > 0 ? -1 : 0);
    return Math.max(0, Math.min(TALK_STEPS - 1, current + delta));
  };
  let talkStamp = 0;
  let talkStamped = null;  // the step and layout of the newest stamp
  window.sbertDemoTalkStamp = (step) => {
    // Sent with each step change: the layout to draw the step for, and a count that orders the page's
    // changes (the server drops a step's answer once a newer change has been stamped). Gradio fires the
    // radio's change again, with the step unchanged, while the page's other events update it: such a
    // change keeps the stamp, so nothing is asked for again. Called with no step (Train again): a new stamp.
    const layout = window.innerWidth < 640 ? "phone" : "screen";
    const key = `${step}|${layout}`;
    if (step === undefined || key !== talkStamped) { talkStamp += 1; }
    if (step !== undefined) { talkStamped = key; }  // Train again's stamp leaves the step's: a repeat stays one
    return [layout, talkStamp];
  };
  // The presenter view's step answers, one per page at a time (ui/talk.py): a step change asks for its answer
  // (the hidden #talk-show) at once, or, while an answer is under way, once that one has ended. The server
  // ends an answer the moment a newer change is stamped, so the wait is short; the newest change is the one
  // asked for, however many came meanwhile. So no older step's answer can reach the page after a newer one's.
  const TALK_ASK_WAIT_MS = 10000;  // ask anyway after this long: an answer whose end the page never heard of
  let talkAsking = false;
  let talkAsked = 0;  // the stamp last asked for
  let talkAskAgain = null;  // the timer of a change waiting for the answer under way
  const talkAskNow = () => {
    const button = document.getElementById("talk-show");
    if (talkAskAgain !== null) { clearTimeout(talkAskAgain); talkAskAgain = null; }
    if (!button) { return; }
    talkAsking = true;
    talkAsked = talkStamp;
    button.click();
  };
  window.sbertDemoTalkAsk = () => {
    if (talkStamp === talkAsked) { return; }  // the change kept its stamp: the answer is the one asked for
    if (!talkAsking) { talkAskNow(); return; }
    if (talkAskAgain === null) { talkAskAgain = setTimeout(talkAskNow, TALK_ASK_WAIT_MS); }
  };
  window.sbertDemoTalkAnswered = () => {
    talkAsking = false;
    if (talkAskAgain !== null) { talkAskNow(); }
  };
  window.sbertDemoTalkRoom = (room) => {
    // The presenter's board for this tab (sessionStorage: kept over a reload, never in the address bar a
    // projector shows): given "CODE:SECRET", keep it; without, the kept one (ui/talk.py's room_from_link).
    const name = "sbert-demo-talk-room";
    try {
      if (room === undefined) { return window.sessionStorage.getItem(name) || ""; }
      if (typeof room === "string" && room.includes(":")) { window.sessionStorage.setItem(name, room); }
    } catch (error) { /* storage switched off: a reload then starts without the board */ }
    return room === undefined ? "" : [];
  };
  window.sbertDemoStepInUrl = (step) => {
    // The presenter view's address follows its step (?view=talk&step=N), so a reload, a copied
    // address and the QR code all open the step on the screen.
    const params = new URLSearchParams(window.location.search);
    if (params.get("view") !== "talk" && params.get("tab") !== "talk") { return; }
    if (Number.isInteger(step)) { params.set("step", String(step + 1)); } else { params.delete("step"); }
    history.replaceState(null, "", window.location.pathname + "?" + params.toString() + window.location.hash);
  };
  const narrow = () => {
    // Gradio scopes @media rules to its container, so narrow-screen rules that depend on the page's
    // mode (talk-mode) key on this class instead.
    document.body.classList.toggle("narrow", window.innerWidth < 640);
  };
  narrow();
  window.addEventListener("resize", narrow);
  window.sbertDemoReveal = (id) => {
    // A finished run's result scrolled into view unless its top is on screen already (ui/common.py).
    const element = document.getElementById(id);
    if (!element || element.offsetParent === null) { return; }
    const top = element.getBoundingClientRect().top;
    if (top < 0 || top > window.innerHeight * 0.75) { element.scrollIntoView({behavior: "smooth", block: "start"}); }
  };
  const pageModes = () => {
    // What the link asks the page to be: the presenter view, a phone's join page, the presenter's board.
    const params = new URLSearchParams(window.location.search);
    if (params.get("view") === "talk") {
      document.body.classList.add("talk-mode");
    }
    if (params.get("board") && !params.get("key")) {  // an audience board's join link: the phone page
      document.body.classList.add("join-mode");
    }
    if (params.get("key")) {
      // The presenter's link: once the board is open (the page has read the secret), the secret leaves
      // the address bar, which a projector would show.
      const strip = new MutationObserver(() => {
        if (!document.querySelector("#board-invite .board-invite, #talk-room .room-open")) { return; }
        strip.disconnect();
        params.delete("key");
        const rest = params.toString();
        history.replaceState(null, "", window.location.pathname + (rest ? "?" + rest : "") + window.location.hash);
      });
      strip.observe(document.body, {childList: true, subtree: true});
    }
  };
  const talkKeys = () => {
    window.addEventListener("resize", scheduleFit);
    document.addEventListener("fullscreenchange", scheduleFit);
    document.addEventListener("keydown", (event) => {
      const talk = document.querySelector("#talk-next");
      if (!talk || talk.offsetParent === null) { return; }  // only while the Talk tab is shown
      const typing = ["INPUT", "TEXTAREA"].includes(document.activeElement?.tagName);
      if (typing || event.ctrlKey || event.metaKey || event.altKey) { return; }
      if (["ArrowRight", "PageDown", "n", "N"].includes(event.key)) { talk.click(); event.preventDefault(); }
      if (["ArrowLeft", "PageUp", "p", "P"].includes(event.key)) {
        document.querySelector("#talk-back")?.click(); event.preventDefault();
      }
      if (["q", "Q"].includes(event.key)) { window.sbertDemoQr(); event.preventDefault(); }
      if (["f", "F"].includes(event.key)) {  // full screen on and off, as in slide software
        if (document.fullscreenElement) { document.exitFullscreen?.().catch(() => {}); }
        else { document.documentElement.requestFullscreen?.().catch(() => {}); }
        event.preventDefault();
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
      // The PNG is named after the figure's title too (Plotly's default is "newplot.png"), set just
      // before Plotly's own click handler on the same button reads it.
      camera.addEventListener("click", () => {
        const context = gd._context || {};
        if (!context.toImageButtonOptions || context.toImageButtonOptions.format !== "svg") {
          context.toImageButtonOptions = Object.assign({}, context.toImageButtonOptions, {filename: fileName(gd)});
        }
      }, true);
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
    const shownText = new WeakMap();  // heatmap trace -> its cell-number template
    const heatmapText = (gd) => {
      // Cell numbers only where a cell can hold one (30 x 16 px): 24 sentences in a quarter of a
      // laptop, or on a phone, get colours and hover only; the same figure in a wide column keeps them.
      const layout = gd._fullLayout;
      if (!window.Plotly || !layout || !gd.data) { return; }
      gd.data.forEach((trace, index) => {
        if (trace.type !== "heatmap" || !Array.isArray(trace.z) || !trace.z.length) { return; }
        if (!shownText.has(trace)) {
          if (!trace.texttemplate) { return; }
          shownText.set(trace, trace.texttemplate);
        }
        const xaxis = layout[(trace.xaxis || "x").replace(/^x/, "xaxis")];
        const yaxis = layout[(trace.yaxis || "y").replace(/^y/, "yaxis")];
        if (!xaxis || !yaxis || !xaxis._length) { return; }
        const fits = xaxis._length / trace.z[0].length >= 30 && yaxis._length / trace.z.length >= 16;
        const wanted = fits ? shownText.get(trace) : "";
        if ((trace.texttemplate || "") !== wanted) { window.Plotly.restyle(gd, {texttemplate: [wanted]}, [index]); }
      });
    };
    const fitWidth = (gd) => {
      // Gradio draws a figure at its box's width at that moment; a box that widens or narrows later (a
      // step's second figure hidden or shown beside it, a box shown with its value) would keep the old
      // width and be cut or left half empty: the figure follows its box.
      const layout = gd._fullLayout;
      if (!window.Plotly || !layout || gd.offsetParent === null || !gd.clientWidth) { return; }
      if (Math.abs(layout.width - gd.clientWidth) > 4) { window.Plotly.relayout(gd, {width: gd.clientWidth}); }
    };
    const wrapWords = (text, chars) => {
      // Plotly draws a title or a legend entry on one line: break it into lines of at most ``chars``.
      const lines = [];
      let line = "";
      String(text).replace(/<br\s*\/?>/gi, " ").split(/\s+/).filter(Boolean).forEach((word) => {
        if (line && (line + " " + word).length > chars) { lines.push(line); line = word; } else { line = line ? line + " " + word : word; }
      });
      if (line) { lines.push(line); }
      return lines.join("<br>");
    };
    const NARROW = 560;  // px: a phone, or a column too narrow for a figure drawn for a page
    const fitNarrow = (gd) => {
      // A figure in a narrow box: its title wrapped (its subtitle left to the page's text), its legend under
      // the plot with names wrapped, and long category labels shortened, so that nothing is cut or drawn
      // over something else. Done once per figure drawn (Gradio draws a new one for each answer).
      const layout = gd._fullLayout;
      const drawn = `${(layout && layout.title && layout.title.text) || ""}|${(gd.data || []).length}`;
      if (!window.Plotly || !layout || gd.offsetParent === null || gd.clientWidth >= NARROW || gd.dataset.narrow === drawn) {
        return;
      }
      // Drawn for a phone on the server (the talk's phone layout: title wrapped, its lines in the top margin,
      // legend below): fitting it again would add the title's lines to a margin that holds them already.
      if ((gd.layout.meta || {}).drawn_for === "phone") { return; }
      const size = (layout.title && layout.title.font && layout.title.font.size) || 15;
      const chars = Math.max(18, Math.floor((gd.clientWidth - 24) / (size * 0.56)));
      const title = wrapWords((layout.title && layout.title.text) || "", chars);
      const lines = title ? title.split("<br>").length : 0;
      const legendChars = Math.max(18, Math.floor((gd.clientWidth - 60) / (((layout.legend || {}).font || {}).size || 12) / 0.56));
      // The title's lines from the top of the figure down, above whatever the top margin already held.
      const update = {"title.text": title, "title.subtitle.text": "", "title.yref": "container", "title.y": 1 - 10 / layout.height,
                      "title.yanchor": "top", "title.pad.t": 8, "legend.orientation": "h", "legend.x": 0,
                      "legend.xanchor": "left", "legend.yref": "container", "legend.y": 0, "legend.yanchor": "bottom",
                      "margin.t": layout.margin.t + Math.max(0, lines - 1) * size * 1.35 + 8,
                      "margin.r": Math.min(layout.margin.r, 30)};
      const names = gd.data.map((trace) => (trace.name ? wrapWords(trace.name, legendChars) : trace.name));
      const shown = gd.data.filter((trace) => trace.showlegend !== false && trace.name).length;
      if (layout.showlegend !== false && shown) {
        const rows = names.reduce((count, name, i) => count + ((gd.data[i].showlegend !== false && name) ? name.split("<br>").length : 0), 0);
        update["margin.b"] = Math.max(layout.margin.b, 60 + rows * 20);
      }
      // long category labels: the start of each (a label already wrapped into short lines stays whole)
      const longest = (t) => Math.max(...String(t).split("<br>").map((line) => line.replace(/<[^>]*>/g, "").length));
      ["yaxis", "yaxis2"].forEach((axis) => {
        const ticks = gd.layout[axis] && gd.layout[axis].ticktext;
        if (Array.isArray(ticks) && ticks.some((t) => longest(t) > 20)) {
          update[axis + ".ticktext"] = ticks.map((t) => {
            const plain = String(t).replace(/<br>/g, " ");
            return longest(t) > 20 ? plain.replace(/<[^>]*>/g, "").slice(0, 18) + "…" : t;
          });
        }
      });
      gd.dataset.narrow = `${title}|${gd.data.length}`;  // this figure is done (a new answer brings a new title)
      window.Plotly.update(gd, {name: names}, update);
    };
    const watched = new WeakSet();
    const boxes = new ResizeObserver((entries) => entries.forEach((entry) => fitWidth(entry.target)));
    let pending = false;
    const scan = () => {
      pending = false;
      document.querySelectorAll(".js-plotly-plot").forEach((gd) => {
        if (!watched.has(gd)) { watched.add(gd); boxes.observe(gd); }
        fitWidth(gd); fitNarrow(gd); addButton(gd); heatmapText(gd);
      });
      // A chip's remove button is titled by its position in Gradio ("Remove 3"): name the chip instead.
      document.querySelectorAll(".token .token-remove").forEach((button) => {
        const name = (button.parentElement.querySelector("span") || {}).textContent || "";
        const title = `Remove ${name.trim()}`;
        if (name.trim() && button.title !== title) { button.title = title; button.setAttribute("aria-label", title); }
      });
    };
    new MutationObserver(() => {
      if (!pending) { pending = true; requestAnimationFrame(scan); }
      scheduleFit();
    }).observe(document.body, {childList: true, subtree: true});
    scan();
  };
  pageModes();
  talkKeys();
  svgButtons();
}
