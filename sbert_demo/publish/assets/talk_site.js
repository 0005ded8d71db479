// The published talk (sbert_demo/publish/talk.py): the presenter view's eight steps from the folder's files.
// Each step's figures were drawn when publishing, for a screen and for a phone (steps/<n>-<layout>.json);
// this page shows them with plotly.js (vendor/), keeps the step in the address (?step=N), and answers the
// presenter view's keys: → / PageDown / N next, ← / PageUp / P back, F full screen, Q the QR code of this page.
"use strict";
(() => {
  const $ = (selector) => document.querySelector(selector);
  const PHONE_WIDTH = 640;
  const state = { story: null, step: 0, kept: new Map(), drawing: 0 };
  const layout = () => (window.innerWidth < PHONE_WIDTH ? "phone" : "screen");
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const damaged = (name) => new Error(`This published talk is incomplete: ${name} is missing or damaged. `
    + "Publish it again (python -m sbert_demo publish --talk) and upload the whole folder.");

  async function json(name) {
    let response;
    try { response = await fetch(name); } catch (error) { throw damaged(name); }
    if (!response.ok) throw damaged(name);
    try { return await response.json(); } catch (error) { throw damaged(name); }
  }

  function say(text, kind) {
    $("#status").textContent = text || "";
    $("#status").className = kind || "";
  }

  function stepFromAddress() {
    const asked = Number(new URLSearchParams(location.search).get("step"));
    return Number.isInteger(asked) && asked >= 1 && asked <= state.story.steps.length ? asked : 0;
  }

  function writeAddress(step) {
    const query = new URLSearchParams(location.search);
    if (step) query.set("step", String(step)); else query.delete("step");
    const search = query.toString();
    history.replaceState(null, "", `${location.pathname}${search ? `?${search}` : ""}`);
  }

  function slide(step, shape) {  // a step's figures for a layout, fetched once
    const name = `steps/${step}-${shape}.json`;
    if (!state.kept.has(name)) {
      const promise = json(name).then((found) => {
        if (!found || !Array.isArray(found.figures)) throw damaged(name);
        return found;
      });
      state.kept.set(name, promise);
      promise.catch(() => state.kept.delete(name));
    }
    return state.kept.get(name);
  }

  function tableHtml(table) {
    if (!table) return "";
    const head = table.headers.map((h) => `<th>${escapeHtml(h)}</th>`).join("");
    const rows = table.rows.map((row) => `<tr>${row.map((cell) => `<td>${escapeHtml(cell)}</td>`).join("")}</tr>`).join("");
    return `<table><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
  }

  function figureHeight(shape) {  // a screen's figures fill what the title and caption leave
    if (shape === "phone") return null;
    const top = $("#figures").getBoundingClientRect().top + window.scrollY;
    return Math.max(320, Math.floor(window.innerHeight - top - 20));
  }

  async function show(step) {
    const story = state.story, steps = story.steps, shape = layout(), drawing = ++state.drawing;
    document.body.classList.toggle("phone", shape === "phone");
    state.step = step;
    writeAddress(step);
    $("#previous").disabled = step === 0;
    $("#next").disabled = step === steps.length;
    document.body.removeAttribute("data-step");
    document.querySelectorAll("#figures .figure").forEach((node) => Plotly.purge(node));
    $("#figures").innerHTML = "";
    $("#table").innerHTML = "";
    say("");
    if (step === 0) {
      $("#title").textContent = `${steps.length} steps: why siamese sentence embeddings beat naive ones`;
      $("#caption").textContent = "Press → (or Next) to start; F fills the screen; Q shows the talk's QR code, "
        + "so that the room can open it on their phones and step through it there.";
      $("#intro").innerHTML = steps.map((s) => `<li>${escapeHtml(s.name)}</li>`).join("");
      $("#intro").hidden = false;
      document.body.dataset.step = "0";
      return;
    }
    $("#intro").hidden = true;
    const current = steps[step - 1];
    $("#title").textContent = `${step} / ${steps.length} · ${current.name}`;
    $("#caption").textContent = current.caption;
    if (current.room) {
      const app = story.app
        ? `<a href="${escapeHtml(story.app)}">Open this step in the app</a> to start a board for the room.`
        : "This copy of the talk is a static page, with no app behind it to send sentences to.";
      $("#figures").innerHTML = `<div class="room">The room's board needs the app: the audience sends sentences `
        + `to a server, and the app maps them live under both models. ${app}</div>`;
      document.body.dataset.step = String(step);
      return;
    }
    say(`Loading step ${step}…`, "busy");
    try {
      const found = await slide(step, shape);
      if (drawing !== state.drawing) return;  // the presenter moved on
      say("");
      if (found.note) {
        const note = document.createElement("strong");
        note.textContent = ` ${found.note}`;
        $("#caption").append(note);
      }
      // every figure's place first, so that each is drawn at the width its column has
      const nodes = found.figures.map(() => $("#figures").appendChild(Object.assign(document.createElement("div"),
        { className: "figure" })));
      const height = figureHeight(shape);
      for (const [i, figure] of found.figures.entries()) {
        const look = { ...figure.layout, autosize: true };
        if (height) look.height = height;
        delete look.width;
        await Plotly.newPlot(nodes[i], figure.data, look, { displaylogo: false, responsive: true, displayModeBar: false });
      }
      $("#table").innerHTML = tableHtml(found.table);
      if (drawing === state.drawing) document.body.dataset.step = String(step);
    } catch (error) {
      if (drawing === state.drawing) { say(error.message, "error"); document.body.dataset.step = "error"; }
    }
  }

  function move(by) {
    const next = Math.min(state.story.steps.length, Math.max(0, state.step + by));
    if (next !== state.step) show(next);
  }

  function toggleQr(open = $("#qr").hidden) {
    if (open) {
      // the talk's own address, not the step on the screen: a phone opens the talk, where the room starts it
      const address = new URL(location.href);
      address.searchParams.delete("step");
      address.hash = "";
      if (typeof qrcode === "function") {  // qrcode-generator, vendored where npm was there when publishing
        const code = qrcode(0, "M");
        code.addData(address.href);
        code.make();
        $("#qr-code").innerHTML = code.createSvgTag({ cellSize: 8, margin: 2, scalable: true });
      } else if (state.story.qr === "qr.svg") {  // drawn when publishing, of the address it was given
        $("#qr-code").innerHTML = '<img src="qr.svg" alt="The QR code of this talk">';
      } else {
        $("#qr-code").textContent = "";
      }
      $("#qr-link").textContent = address.href;
    }
    $("#qr").hidden = !open;
  }

  function present() {
    if (document.fullscreenElement) document.exitFullscreen();
    else if (document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
  }

  async function start() {
    try {
      state.story = await json("steps.json");
      if (!state.story || !Array.isArray(state.story.steps)) throw damaged("steps.json");
    } catch (error) {
      say(error.message, "error");
      document.body.dataset.step = "error";
      return;
    }
    $("#next").addEventListener("click", () => move(1));
    $("#previous").addEventListener("click", () => move(-1));
    $("#present").addEventListener("click", present);
    $("#show-qr").addEventListener("click", () => toggleQr());
    $("#qr").addEventListener("click", (event) => { if (event.target === $("#qr")) toggleQr(false); });
    document.addEventListener("keydown", (event) => {
      if (event.altKey || event.ctrlKey || event.metaKey) return;
      const key = event.key.toLowerCase();
      if (["arrowright", "pagedown", "n", " "].includes(key)) { event.preventDefault(); move(1); }
      else if (["arrowleft", "pageup", "p"].includes(key)) { event.preventDefault(); move(-1); }
      else if (key === "f") present();
      else if (key === "q") toggleQr();
      else if (key === "escape") toggleQr(false);
    });
    let shape = layout();
    window.addEventListener("resize", () => {  // a phone turned, a window narrowed: the other drawing
      if (layout() !== shape) { shape = layout(); show(state.step); }
    });
    show(stepFromAddress());
  }

  start();
})();
