// The map view's agreement tables (agreement.json, sbert_demo/atlas/agreement.py): for each category column of the
// corpus, each model's share of a sentence's nearest neighbours that carry its own value, against chance (a bar
// with the chance line on it), and its clusters' adjusted Rand index; a click on a heading sorts by it. Under each
// table, per value: each model's share and the value its neighbours carry most often instead (what it mixes up).
"use strict";
window.atlasAgreement = (box, found) => {
  const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  const BAR = 60;  // px for a share of 1
  const columns = [
    { key: "key", name: "model", title: "the model (its full name on hover)" },
    { key: "agreement", name: "same", title: `the share of each sentence's ${found.k} nearest neighbours with its own value; the line marks chance` },
    { key: "chance", name: "chance", title: "the share expected by chance, from the value counts" },
    { key: "ari", name: "ARI", title: "adjusted Rand index of the model's clusters and the column (0: chance)" },
  ];
  const sorting = found.fields.map(() => ({ key: "agreement", down: true }));

  function rows(field, order) {
    const sorted = [...field.models].sort((a, b) => {
      const x = a[order.key], y = b[order.key];
      const by = typeof x === "string" ? x.localeCompare(y) : x - y;
      return order.down ? -by : by;
    });
    return sorted.map((row) => `<tr><td title="${escapeHtml(row.model)}">${escapeHtml(row.key)}</td>`
      + `<td class="num"><span class="share" title="chance ${row.chance.toFixed(2)}"><span class="bar" style="width:${Math.round(BAR * row.agreement)}px"></span>`
      + `<span class="chance-line" style="left:${Math.round(BAR * row.chance)}px"></span></span>${row.agreement.toFixed(2)}</td>`
      + `<td class="num">${row.chance.toFixed(2)}</td><td class="num">${row.ari.toFixed(2)}</td></tr>`).join("");
  }

  function byValue(field) {  // a value a row: its count and chance, each model's share and what it mixes it up with
    const values = field.models[0].values.map((v) => v.value);
    return `<details class="by-value"><summary>By value (${values.length})</summary><table class="agree values"><thead><tr><th>value</th>`
      + field.models.map((row) => `<th title="${escapeHtml(row.model)}">${escapeHtml(row.key)}</th>`).join("") + "</tr></thead><tbody>"
      + values.map((value) => {
        const per = field.models.map((row) => row.values.find((v) => v.value === value));
        const first = per.find(Boolean);
        return `<tr><td>${escapeHtml(value)} <span class="muted">${first.count.toLocaleString("en")} · chance ${first.chance.toFixed(2)}</span></td>`
          + per.map((v) => (v ? `<td class="num" title="${v.confused ? `its neighbours' other value most often: ${escapeHtml(v.confused)} (${v.confused_share.toFixed(2)})` : ""}">`
            + `${v.agreement.toFixed(2)}${v.confused ? `<div class="muted small">else ${escapeHtml(v.confused)}</div>` : ""}</td>` : "<td></td>")).join("") + "</tr>";
      }).join("") + "</tbody></table></details>";
  }

  function draw() {
    box.innerHTML = found.fields.map((field, t) => `<table class="agree" data-table="${t}"><caption>${escapeHtml(field.field)}</caption>`
      + `<thead><tr>${columns.map((c) => `<th data-key="${c.key}" title="${escapeHtml(c.title)}" aria-sort="${sorting[t].key === c.key ? (sorting[t].down ? "descending" : "ascending") : "none"}">`
        + `<button type="button">${c.name}</button></th>`).join("")}</tr></thead><tbody>${rows(field, sorting[t])}</tbody></table>${byValue(field)}`).join("");
  }

  box.addEventListener("click", (event) => {
    const heading = event.target.closest("th[data-key]");
    if (!heading) return;
    const t = Number(heading.closest("table").dataset.table), key = heading.dataset.key;
    sorting[t] = { key, down: sorting[t].key === key ? !sorting[t].down : key !== "key" };
    draw();
  });
  draw();
};
