// The published sentence playground (sbert_demo/publish/site.py): the visitor's sentences embedded in this page
// by each model the map searches with (atlas_search.js: a static model's table, or MiniLM in ONNX Runtime Web),
// and the cosine of every pair, as a table coloured by value, with each sentence's nearest.
"use strict";
(() => {
  const $ = (selector) => document.querySelector(selector);
  const MAX_SENTENCES = 12, MAX_CHARS = 500;
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  let meta = null;

  function say(text, kind) {
    $("#status").textContent = text || "";
    $("#status").className = kind || "";
  }

  function colour(value) {  // -0.2 (white) .. 1 (deep blue)
    const t = Math.max(0, Math.min(1, (value + 0.2) / 1.2));
    return { background: `rgb(${Math.round(255 - 225 * t)}, ${Math.round(255 - 170 * t)}, ${Math.round(255 - 45 * t)})`,
      ink: t > 0.6 ? "#fff" : "#111827" };
  }

  function cosines(vectors) {
    return vectors.map((a) => vectors.map((b) => a.reduce((sum, value, j) => sum + value * b[j], 0)));
  }

  function shown(label, matrix, sentences, empty) {
    const k = sentences.length;
    const head = `<tr><th></th>${sentences.map((_, j) => `<th scope="col">${j + 1}</th>`).join("")}</tr>`;
    const rows = matrix.map((row, i) => `<tr><th scope="row">${i + 1}</th>${row.map((value, j) => {
      const look = colour(value);
      return `<td data-i="${i}" data-j="${j}" data-cosine="${value}" style="background:${look.background};color:${look.ink}"`
        + ` title="${escapeHtml(`${i + 1} · ${j + 1}: cosine ${value.toFixed(3)}`)}">${value.toFixed(2)}</td>`;
    }).join("")}</tr>`).join("");
    const nearest = sentences.map((_, i) => {
      let best = -1;
      for (let j = 0; j < k; j++) if (j !== i && (best < 0 || matrix[i][j] > matrix[i][best])) best = j;
      return `<li>${i + 1} → ${best + 1} <span class="muted">(${matrix[i][best].toFixed(2)})</span></li>`;
    }).join("");
    const note = empty.length ? `<p class="muted">No word of ${empty.map((i) => i + 1).join(", ")} is in this model's `
      + "vocabulary: no vector, cosine 0.</p>" : "";
    return `<section class="model"><h2>${escapeHtml(label)}</h2><table class="cosines">${head}${rows}</table>`
      + `${note}<p class="muted">Each sentence's nearest:</p><ol class="nearest">${nearest}</ol></section>`;
  }

  async function compare() {
    const sentences = $("#sentences").value.split("\n").map((line) => line.trim()).filter(Boolean);
    if (sentences.length < 2) { say("Type at least two sentences, one a line.", "error"); return; }
    if (sentences.length > MAX_SENTENCES) { say(`Up to ${MAX_SENTENCES} sentences at once; ${sentences.length} are typed.`, "error"); return; }
    const long = sentences.findIndex((s) => s.length > MAX_CHARS);
    if (long >= 0) { say(`Sentence ${long + 1} is longer than ${MAX_CHARS} characters; shorten it.`, "error"); return; }
    $("#numbered").innerHTML = sentences.map((s) => `<li>${escapeHtml(s)}</li>`).join("");
    $("#results").innerHTML = "";
    document.body.removeAttribute("data-compared");
    $("#compare").disabled = true;
    try {
      for (const m of meta.search) {
        const label = meta.models[m].label, bytes = (meta.search_bytes || {})[m];
        say(`Embedding with ${label}${bytes ? ` (the first time downloads ${Math.max(1, Math.round(bytes / 1e6))} MB)` : ""}…`, "busy");
        const vectors = [];
        for (const sentence of sentences) vectors.push(await window.atlasSearch.embed(m, meta.n, sentence));
        const empty = vectors.map((v, i) => (v.every((x) => x === 0) ? i : -1)).filter((i) => i >= 0);
        $("#results").insertAdjacentHTML("beforeend", shown(label, cosines(vectors), sentences, empty));
      }
      say(`${sentences.length} sentences compared under ${meta.search.length} model(s), in this page.`);
      document.body.dataset.compared = String(sentences.length);
    } catch (error) { say(error.message, "error"); document.body.dataset.compared = "error"; }
    finally { $("#compare").disabled = false; }
  }

  async function start() {
    try {
      window.atlasSource = window.atlasData({ base: "data/", api: null });
      meta = await window.atlasSource.meta();
      if (!Array.isArray(meta.search) || !meta.search.length) throw new Error("This map was published without search: no model can embed sentences in this page.");
    } catch (error) { say(error.message, "error"); document.body.dataset.ready = "error"; return; }
    $("#title").textContent = `Sentence playground · ${meta.search.map((m) => meta.models[m].key || meta.models[m].label).join(" and ")}`;
    $("#compare").addEventListener("click", compare);
    document.body.dataset.ready = "1";
  }
  start();
})();
