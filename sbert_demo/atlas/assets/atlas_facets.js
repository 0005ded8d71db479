// The map view's facets on the corpus's own columns (meta.fields): a category's values to click, a number's or
// a date's histogram to brush. Each shows its counts among the rows that pass the other facets and lie in the
// selection (atlas_data.js's tallies: computed there, once). The chosen facets go to onChange; a link writes
// them as facet=<f>:<code>,<code> or facet=<f>:<lo>..<hi>.
"use strict";
window.atlasFacets = ({ meta, palette, number, onChange }) => {  // number: the map view's plainNumber
  const BINS = 32;
  const fields = meta.fields || [];
  const chosen = new Map();  // f -> {f, values: [codes]} or {f, lo, hi}
  let tallies = null;
  const box = document.querySelector("#facet-list");
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const whole = (about) => about.type === "i16";
  const shown = (about, v) => (about.kind === "date"
    ? new Date(Math.round(v * 86400) * 1000).toISOString().slice(0, v % 1 ? 16 : 10)
    : number(Number(Number(v).toPrecision(5))));
  const width = (about) => (about.max - about.min) / BINS || 1;

  function list() { return [...chosen.values()]; }

  function changed() {
    render();
    document.querySelector("#facet-clear").disabled = !chosen.size;
    onChange(list());
  }

  function toggle(f, code) {
    const facet = chosen.get(f) || { f, values: [] };
    facet.values = facet.values.includes(code) ? facet.values.filter((c) => c !== code) : [...facet.values, code].sort((a, b) => a - b);
    if (facet.values.length) chosen.set(f, facet); else chosen.delete(f);
    changed();
  }

  function brush(f, fromBin, toBin) {  // bins fromBin..toBin, as a range of values (whole values: whole ends)
    const about = fields[f], step = width(about);
    let lo = about.min + Math.min(fromBin, toBin) * step, hi = Math.max(fromBin, toBin) === BINS - 1
      ? about.max : about.min + (Math.max(fromBin, toBin) + 1) * step;
    if (whole(about)) { lo = Math.ceil(lo); hi = Math.max(lo, Math.floor(hi === about.max ? hi : hi - 1e-9)); }
    chosen.set(f, { f, lo, hi });
    changed();
  }

  function describe(f) {
    const about = fields[f], facet = chosen.get(f);
    if (!facet) return "";
    return facet.values ? facet.values.map((c) => about.categories[c]).join(", ")
      : `${shown(about, facet.lo)} to ${shown(about, facet.hi)}`;
  }

  function render() {
    fields.forEach((about, f) => {
      const item = box.querySelector(`[data-f="${f}"]`);
      item.querySelector(".chosen").textContent = describe(f);
      item.querySelector(".undo").hidden = !chosen.has(f);
      const counts = tallies && tallies[f];
      if (about.kind === "category") {
        const facet = chosen.get(f);
        item.querySelectorAll("button.value").forEach((button) => {
          const code = Number(button.dataset.code);
          button.setAttribute("aria-pressed", String(Boolean(facet && facet.values.includes(code))));
          button.querySelector(".n").textContent = counts ? counts[code].toLocaleString("en") : "";
        });
      } else drawHistogram(item.querySelector("canvas"), about, counts, chosen.get(f));
    });
  }

  function drawHistogram(canvas, about, counts, facet, dragged = null) {
    const dpr = window.devicePixelRatio || 1, w = canvas.clientWidth, h = canvas.clientHeight;
    if (!w) return;
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    const g = canvas.getContext("2d");
    g.scale(dpr, dpr);
    g.clearRect(0, 0, w, h);
    const top = counts ? Math.max(1, ...counts) : 1, bar = w / BINS, step = width(about);
    const inRange = (b) => (dragged ? b >= Math.min(...dragged) && b <= Math.max(...dragged)
      : !facet || (about.min + (b + 1) * step > facet.lo && about.min + b * step <= facet.hi));
    for (let b = 0; b < BINS; b++) {
      const height = counts ? Math.max(counts[b] ? 1 : 0, (h - 2) * counts[b] / top) : 0;
      g.fillStyle = inRange(b) ? "#1d4ed8" : "#c5cad3";
      g.fillRect(b * bar + 0.5, h - height, Math.max(1, bar - 1), height);
    }
  }

  function binAt(canvas, event) {
    const r = canvas.getBoundingClientRect();
    return Math.max(0, Math.min(BINS - 1, Math.floor((event.clientX - r.left) / r.width * BINS)));
  }

  function build() {
    box.innerHTML = fields.map((about, f) => `<details class="facet" data-f="${f}"${f === 0 ? " open" : ""}>`
      + `<summary><b>${escapeHtml(about.name)}</b> <span class="muted">${about.kind}</span> <span class="chosen"></span></summary>`
      + `<button type="button" class="undo" hidden>Any ${escapeHtml(about.name)}</button>`
      + (about.kind === "category"
        ? `<div class="values">${about.categories.map((name, code) => `<button type="button" class="value" data-code="${code}" aria-pressed="false" title="${escapeHtml(name)}">`
          + `<i style="background:rgb(${palette[code % palette.length]})"></i><span class="name">${escapeHtml(name)}</span> <span class="n"></span></button>`).join("")}</div>`
        : `<canvas class="hist" role="img" aria-label="How many sentences have each ${escapeHtml(about.name)}: drag across it to choose a range"></canvas>`
          + `<div class="ends muted"><span>${escapeHtml(shown(about, about.min))}</span><span>${escapeHtml(shown(about, about.max))}</span></div>`)
      + (about.missing ? `<div class="muted small">${about.missing.toLocaleString("en")} without a value: left out once a value is chosen</div>` : "")
      + "</details>").join("");
    box.addEventListener("click", (event) => {
      const item = event.target.closest("[data-f]");
      if (!item) return;
      const f = Number(item.dataset.f), value = event.target.closest("button.value");
      if (value) toggle(f, Number(value.dataset.code));
      else if (event.target.closest("button.undo")) { chosen.delete(f); changed(); }
    });
    box.querySelectorAll("canvas.hist").forEach((canvas) => {
      const f = Number(canvas.closest("[data-f]").dataset.f);
      let from = -1;
      canvas.addEventListener("pointerdown", (event) => { from = binAt(canvas, event); canvas.setPointerCapture(event.pointerId); });
      canvas.addEventListener("pointermove", (event) => {
        if (from >= 0) drawHistogram(canvas, fields[f], tallies && tallies[f], null, [from, binAt(canvas, event)]);
      });
      canvas.addEventListener("pointerup", (event) => { if (from >= 0) { const to = binAt(canvas, event); const start = from; from = -1; brush(f, start, to); } });
      canvas.addEventListener("pointercancel", () => { from = -1; render(); });
    });
    box.addEventListener("toggle", render, true);  // a histogram opened is drawn at its width
    document.querySelector("#facet-clear").addEventListener("click", () => { chosen.clear(); changed(); });
    window.addEventListener("resize", render);
    const left = meta.fields_left || [];
    document.querySelector("#fields-left").textContent = left.length ? `Kept as text, not a filter: ${left.join("; ")}.` : "";
    document.querySelector("#facets").hidden = !fields.length && !left.length;
  }

  build();
  return {
    list,
    // facets from a link (facet=<f>:<codes> or <lo>..<hi>), those that name a column and values of this map
    fromLink(values) {
      chosen.clear();
      for (const value of values) {
        const [f, what = ""] = [Number(value.split(":")[0]), value.slice(value.indexOf(":") + 1)];
        const about = fields[f];
        if (!about || !value.includes(":")) continue;
        if (about.kind === "category") {
          const codes = what.split(",").map(Number).filter((c) => Number.isInteger(c) && c >= 0 && c < about.categories.length);
          if (codes.length) chosen.set(f, { f, values: [...new Set(codes)].sort((a, b) => a - b) });
        } else {
          const [lo, hi] = what.split("..").map(Number);
          if (Number.isFinite(lo) && Number.isFinite(hi) && lo <= hi) chosen.set(f, { f, lo, hi });
        }
      }
      document.querySelector("#facet-clear").disabled = !chosen.size;
      render();
      return list();
    },
    toLink: () => list().map((facet) => `facet=${facet.f}:${facet.values ? facet.values.join(",") : `${facet.lo}..${facet.hi}`}`),
    names: () => list().map((facet) => fields[facet.f].name),
    show(found) { tallies = found; render(); },
    toggle, brush, BINS,
  };
};
