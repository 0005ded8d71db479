// The map view: every model's map of one corpus (up to a million points each) drawn with WebGL.
// Points arrive as binary float32 arrays; a sentence is fetched when it is hovered or tapped.
// Lasso (or Shift + drag) selects sentences in one map: they keep their colour in every map, the rest
// turn grey; the side panel lists them (paged, filtered by words), counts them per cluster and exports
// them. "Shared neighbours" colours each sentence by how many of its 10 nearest neighbours two models
// share; "Where they disagree" lists the sentences whose neighbourhoods differ most.
"use strict";
(() => {
  const params = new URLSearchParams(location.search);
  const mapId = params.get("map") || "";
  const $ = (selector) => document.querySelector(selector);
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#86bcb6", "#d37295", "#8cd17d", "#b6992d", "#499894", "#f1ce63", "#a0cbe8", "#ffbe7d",
    "#d4a6c8", "#79706e", "#fabfd2"].map(hex);
  const GREY = [190, 192, 198];
  const NONE = [225, 226, 230];  // a row without a value in the column the map is coloured by
  const PAGE = 50;
  // While a map moves it draws a random subset of its points, all of them once it rests: a CPU-drawn
  // WebGL (SwiftShader) spends ~0.6 us a point, so a million would cost ~600 ms a frame.
  const MOTION_POINTS = 60000;
  const REST_MS = 160;
  const state = {
    meta: null, views: [], colour: "cluster", labels: null, shared: null, pair: [0, 1],
    selection: null, base: null, baseLink: null, facets: null, mask: null, from: -1, lasso: false, page: 0, filter: "", active: 0, focus: -1,
    timings: { start: performance.now() },
  };
  const sentences = new Map();

  function hex(value) {
    const n = parseInt(value.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }

  function say(text, kind = "") {
    const box = $("#status");
    box.textContent = text;
    box.className = kind;
  }

  // Where the map's files are: data/<id>/ beside the app's page (/atlas/data/<id>/), data/ in a published folder.
  // The app also writes a comparison of two models that is not there yet (api/<id>/compare).
  const source = window.atlasSource = window.atlasData(mapId
    ? { base: `data/${encodeURIComponent(mapId)}/`, api: `api/${encodeURIComponent(mapId)}` } : { base: "data/", api: null });

  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (key === "class") node.className = value; else if (key === "text") node.textContent = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) node.append(child);
    return node;
  }

  // --- one model's map ---------------------------------------------------------------------------

  const VERTEX = `
    attribute vec2 a_pos; attribute vec4 a_col;
    uniform vec2 u_scale; uniform vec2 u_shift; uniform float u_size;
    varying vec4 v_col;
    void main() {
      gl_Position = vec4(a_pos * u_scale + u_shift, 0.0, 1.0);
      gl_PointSize = a_col.a < 0.99 ? max(1.0, u_size * 0.75) : u_size;
      v_col = a_col;
    }`;
  const FRAGMENT = `
    precision mediump float; varying vec4 v_col; uniform float u_alpha;
    void main() {
      vec2 d = gl_PointCoord - 0.5;
      if (dot(d, d) > 0.25) discard;
      gl_FragColor = vec4(v_col.rgb, v_col.a * u_alpha);
    }`;

  class MapView {
    constructor(m, model, xy, clusters) {
      Object.assign(this, { m, model, xy, clusters, n: xy.length / 2, scale: 1, tx: 0, ty: 0, dirty: false });
      this.panel = el("div", { class: "panel", "data-model": String(m) });
      this.head = el("h2", { text: model.label });
      this.sub = el("span", { class: "muted", text: ` ${model.method || ""} · ${this.n.toLocaleString()} sentences` });
      this.head.append(this.sub);
      this.canvas = el("canvas", { "aria-label": `${model.label}: map of the corpus`, role: "img" });
      this.ink = el("canvas", { class: "ink" });
      this.names = el("div", { class: "names" });
      this.marks = el("div", { class: "marks" });
      this.box = el("div", { class: "map" }, this.canvas, this.ink, this.names, this.marks);
      this.panel.append(this.head, this.box);
      $("#maps").append(this.panel);
      this.shuffle();
      this.setUpGl();
      this.buildGrid();
      this.colours = new Uint8Array(this.n * 4);
      new ResizeObserver(() => this.resize()).observe(this.box);
      this.listen();
    }

    shuffle() {  // buffer slot k holds row order[k], a fixed random order: any prefix is a random sample
      const n = this.n;
      if (n <= MOTION_POINTS) { this.order = this.slot = null; return; }
      const order = new Uint32Array(n);
      for (let i = 0; i < n; i++) order[i] = i;
      let seed = 12345;
      for (let i = n - 1; i > 0; i--) {
        seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
        const j = seed % (i + 1);
        const t = order[i]; order[i] = order[j]; order[j] = t;
      }
      const slot = new Uint32Array(n);
      for (let k = 0; k < n; k++) slot[order[k]] = k;
      this.order = order;
      this.slot = slot;
    }

    inOrder(values, width) {  // per-row values (width per row) rearranged into buffer order
      if (!this.order) return values;
      const out = new values.constructor(values.length);
      for (let k = 0; k < this.n; k++) {
        const from = this.order[k] * width, to = k * width;
        for (let c = 0; c < width; c++) out[to + c] = values[from + c];
      }
      return out;
    }

    moved() {  // pan, zoom or pinch: draw the sample until the map rests
      this.moving = true;
      clearTimeout(this.restTimer);
      this.restTimer = setTimeout(() => { this.moving = false; this.redraw(); }, REST_MS);
      this.redraw();
    }

    setUpGl() {
      const options = { antialias: false, alpha: false, preserveDrawingBuffer: false };
      const gl = this.canvas.getContext("webgl2", options) || this.canvas.getContext("webgl", options);
      if (!gl) throw new Error("This browser cannot draw WebGL, which a map of this size needs; try a current Chrome, Edge, Firefox or Safari.");
      this.gl = gl;
      this.uint = gl instanceof WebGL2RenderingContext || !!gl.getExtension("OES_element_index_uint");
      const shader = (type, source) => {
        const s = gl.createShader(type);
        gl.shaderSource(s, source);
        gl.compileShader(s);
        return s;
      };
      const program = gl.createProgram();
      gl.attachShader(program, shader(gl.VERTEX_SHADER, VERTEX));
      gl.attachShader(program, shader(gl.FRAGMENT_SHADER, FRAGMENT));
      gl.linkProgram(program);
      gl.useProgram(program);
      this.u = Object.fromEntries(["u_scale", "u_shift", "u_size", "u_alpha"].map((k) => [k, gl.getUniformLocation(program, k)]));
      this.position = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, this.position);
      gl.bufferData(gl.ARRAY_BUFFER, this.inOrder(this.xy, 2), gl.STATIC_DRAW);
      const pos = gl.getAttribLocation(program, "a_pos");
      gl.enableVertexAttribArray(pos);
      gl.vertexAttribPointer(pos, 2, gl.FLOAT, false, 0, 0);
      this.colourBuffer = gl.createBuffer();
      gl.bindBuffer(gl.ARRAY_BUFFER, this.colourBuffer);
      gl.bufferData(gl.ARRAY_BUFFER, this.n * 4, gl.DYNAMIC_DRAW);
      const col = gl.getAttribLocation(program, "a_col");
      gl.enableVertexAttribArray(col);
      gl.vertexAttribPointer(col, 4, gl.UNSIGNED_BYTE, true, 0, 0);
      this.selected = gl.createBuffer();
      this.selectedCount = 0;
    }

    buildGrid() {  // points bucketed by cell: hover and lasso look at a few cells, not a million points
      const g = this.grid = Math.max(16, Math.min(1024, Math.round(Math.sqrt(this.n / 4))));
      const cell = this.cell = new Int32Array(this.n);
      const counts = new Int32Array(g * g + 1);
      for (let i = 0; i < this.n; i++) {
        const cx = Math.min(g - 1, Math.max(0, Math.floor((this.xy[2 * i] + 1) / 2 * g)));
        const cy = Math.min(g - 1, Math.max(0, Math.floor((this.xy[2 * i + 1] + 1) / 2 * g)));
        cell[i] = cy * g + cx;
        counts[cell[i] + 1]++;
      }
      for (let c = 0; c < g * g; c++) counts[c + 1] += counts[c];
      this.starts = counts;
      const fill = counts.slice(0, g * g);
      this.items = new Int32Array(this.n);
      for (let i = 0; i < this.n; i++) this.items[fill[cell[i]]++] = i;
    }

    resize() {
      const dpr = window.devicePixelRatio || 1;
      this.w = this.box.clientWidth;
      this.h = this.box.clientHeight;
      for (const c of [this.canvas, this.ink]) {
        c.width = Math.max(1, Math.round(this.w * dpr));
        c.height = Math.max(1, Math.round(this.h * dpr));
      }
      this.dpr = dpr;
      this.redraw();
    }

    // screen x = (data x * scale + tx) * unit + w / 2; y likewise, upwards
    get unit() { return Math.min(this.w, this.h) / 2 * 0.94; }
    toScreen(x, y) { return [(x * this.scale + this.tx) * this.unit + this.w / 2, this.h / 2 - (y * this.scale + this.ty) * this.unit]; }
    toData(px, py) { return [((px - this.w / 2) / this.unit - this.tx) / this.scale, ((this.h / 2 - py) / this.unit - this.ty) / this.scale]; }

    paint(colours) {
      this.colours = colours;
      const gl = this.gl;
      gl.bindBuffer(gl.ARRAY_BUFFER, this.colourBuffer);
      gl.bufferSubData(gl.ARRAY_BUFFER, 0, colours);
      const rows = state.selection;
      this.selectedCount = rows && this.uint ? rows.length : 0;
      if (this.selectedCount) {
        let slots;
        if (this.slot) {  // a plain loop over typed arrays (no function called per row)
          const slot = this.slot;
          slots = new Uint32Array(rows.length);
          for (let i = 0; i < rows.length; i++) slots[i] = slot[rows[i]];
        } else slots = new Uint32Array(rows.buffer, rows.byteOffset, rows.length);
        if (this.slot && slots.length <= 100000) slots = slots.sort();  // drawn in the maps' order (a filter's million: as found)
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.selected);
        gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, slots, gl.DYNAMIC_DRAW);
      }
      this.redraw();
    }

    redraw() {
      if (this.dirty) return;
      this.dirty = true;
      requestAnimationFrame(() => { this.dirty = false; this.draw(); });
    }

    draw() {
      const gl = this.gl;
      if (!this.w || !this.h) return;
      const density = state.colour === "density";
      gl.viewport(0, 0, this.canvas.width, this.canvas.height);
      const back = density ? 0.07 : 1.0;
      gl.clearColor(back, back, density ? 0.1 : 1.0, 1);
      gl.clear(gl.COLOR_BUFFER_BIT);
      gl.enable(gl.BLEND);
      gl.blendFunc(gl.SRC_ALPHA, density ? gl.ONE : gl.ONE_MINUS_SRC_ALPHA);
      const sx = this.unit * 2 / this.w, sy = this.unit * 2 / this.h;  // clip = (data * scale + shift) * (sx, sy)
      gl.uniform2f(this.u.u_scale, this.scale * sx, this.scale * sy);
      gl.uniform2f(this.u.u_shift, this.tx * sx, this.ty * sy);
      const base = this.n > 300000 ? 1.6 : this.n > 50000 ? 2.2 : this.n > 5000 ? 3.5 : 6;
      gl.uniform1f(this.u.u_size, Math.min(14, base * Math.sqrt(this.scale)) * this.dpr);
      gl.uniform1f(this.u.u_alpha, density ? Math.max(0.02, Math.min(0.5, 3000 / this.n * this.scale)) : 1);
      const share = this.moving ? Math.min(1, MOTION_POINTS / this.n) : 1;
      gl.drawArrays(gl.POINTS, 0, Math.round(this.n * share));
      if (this.selectedCount) {
        gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, this.selected);
        gl.drawElements(gl.POINTS, Math.max(1, Math.round(this.selectedCount * share)), gl.UNSIGNED_INT, 0);
      }
      this.placeNames();
      this.placeMarks();
      state.frames = (state.frames || 0) + 1;
    }

    nearest(px, py, radius = 10) {
      const [x, y] = this.toData(px, py);
      const r = radius / (this.unit * this.scale);
      const g = this.grid;
      const cx0 = Math.max(0, Math.floor((x - r + 1) / 2 * g)), cx1 = Math.min(g - 1, Math.floor((x + r + 1) / 2 * g));
      const cy0 = Math.max(0, Math.floor((y - r + 1) / 2 * g)), cy1 = Math.min(g - 1, Math.floor((y + r + 1) / 2 * g));
      let best = -1, bestD = r * r;
      for (let cy = cy0; cy <= cy1; cy++) {
        for (let cx = cx0; cx <= cx1; cx++) {
          const c = cy * g + cx;
          for (let k = this.starts[c]; k < this.starts[c + 1]; k++) {
            const i = this.items[k];
            const dx = this.xy[2 * i] - x, dy = this.xy[2 * i + 1] - y, d = dx * dx + dy * dy;
            if (d <= bestD) { bestD = d; best = i; }
          }
        }
      }
      return best;
    }

    inside(polygon) {  // rows whose point lies inside polygon (data coordinates), sorted
      let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
      for (const [x, y] of polygon) { x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y); }
      const g = this.grid, found = [];
      const c = (v) => Math.min(g - 1, Math.max(0, Math.floor((v + 1) / 2 * g)));
      const px = Float64Array.from(polygon, (p) => p[0]), py = Float64Array.from(polygon, (p) => p[1]);
      for (let cy = c(y0); cy <= c(y1); cy++) {
        for (let cx = c(x0); cx <= c(x1); cx++) {
          const cell = cy * g + cx;
          for (let k = this.starts[cell]; k < this.starts[cell + 1]; k++) {
            const i = this.items[k], x = this.xy[2 * i], y = this.xy[2 * i + 1];
            if (x < x0 || x > x1 || y < y0 || y > y1) continue;
            let inside = false;
            for (let a = 0, b = px.length - 1; a < px.length; b = a++) {
              if ((py[a] > y) !== (py[b] > y) && x < (px[b] - px[a]) * (y - py[a]) / (py[b] - py[a]) + px[a]) inside = !inside;
            }
            if (inside) found.push(i);
          }
        }
      }
      return Int32Array.from(found).sort();
    }

    placeNames() {  // cluster names where the clusters are; finer regions' names when zoomed in
      const placed = [], parts = [];
      const fits = (x, y, w, h) => x > 2 && y > 2 && x + w < this.w - 2 && y + h < this.h - 2
        && !placed.some((p) => x < p[0] + p[2] && p[0] < x + w && y < p[1] + p[3] && p[1] < y + h);
      const add = (item, css) => {
        if (!item.words || !item.words.length) return;
        const text = item.words.slice(0, css === "fine" ? 2 : 3).join(" · ");
        const w = text.length * (css === "fine" ? 6.2 : 7.2) + 10, h = css === "fine" ? 17 : 20;
        const [sx, sy] = this.toScreen(item.x, item.y);
        const x = sx - w / 2, y = sy - h / 2;
        if (!fits(x, y, w, h)) return;
        placed.push([x, y, w, h]);
        parts.push(`<span class="${css}" style="left:${x.toFixed(0)}px;top:${y.toFixed(0)}px">${escapeHtml(text)}</span>`);
      };
      const coarse = [...this.model.clusters].sort((a, b) => b.size - a.size);
      const budget = this.w < 500 ? 6 : 14;
      if (state.colour !== "density") coarse.slice(0, budget).forEach((c) => add(c, "coarse"));
      if (this.scale >= 2.2) [...(this.model.regions || [])].sort((a, b) => b.size - a.size).forEach((r) => add(r, "fine"));
      const html = parts.join("");
      if (html !== this.namesHtml) { this.names.innerHTML = html; this.namesHtml = html; }
    }

    placeMarks() {
      const rows = state.focus >= 0 ? [state.focus] : [];
      this.marks.innerHTML = rows.map((row) => {
        const [x, y] = this.toScreen(this.xy[2 * row], this.xy[2 * row + 1]);
        return `<span class="mark" style="left:${x.toFixed(1)}px;top:${y.toFixed(1)}px"></span>`;
      }).join("");
    }

    listen() {
      const pointers = new Map();
      let drag = null, pinch = null, path = null, moved = 0;
      const local = (event) => { const r = this.box.getBoundingClientRect(); return [event.clientX - r.left, event.clientY - r.top]; };
      this.box.addEventListener("pointerdown", (event) => {
        this.box.setPointerCapture(event.pointerId);
        pointers.set(event.pointerId, local(event));
        moved = 0;
        hideTip();
        if (pointers.size === 2) {
          const [a, b] = [...pointers.values()];
          pinch = { d: Math.hypot(a[0] - b[0], a[1] - b[1]), scale: this.scale, tx: this.tx, ty: this.ty, mid: [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2] };
          drag = path = null;
        } else if (state.lasso || event.shiftKey) {
          path = [local(event)];
        } else {
          drag = { at: local(event), tx: this.tx, ty: this.ty };
        }
      });
      this.box.addEventListener("pointermove", (event) => {
        const at = local(event);
        if (pointers.has(event.pointerId)) pointers.set(event.pointerId, at);
        if (pinch && pointers.size === 2) {
          const [a, b] = [...pointers.values()];
          const factor = Math.hypot(a[0] - b[0], a[1] - b[1]) / pinch.d;
          Object.assign(this, { scale: pinch.scale, tx: pinch.tx, ty: pinch.ty });
          this.zoom(factor, pinch.mid);
          moved += 10;
        } else if (path) {
          path.push(at);
          this.drawPath(path);
        } else if (drag) {
          moved += Math.abs(event.movementX || 0) + Math.abs(event.movementY || 0);
          this.tx = drag.tx + (at[0] - drag.at[0]) / this.unit;
          this.ty = drag.ty - (at[1] - drag.at[1]) / this.unit;
          this.moved();
        } else if (event.pointerType === "mouse") {
          hover(this, at, event);
        }
      });
      const end = (event) => {
        pointers.delete(event.pointerId);
        if (path && path.length > 2) {
          const polygon = path.map(([x, y]) => this.toData(x, y));
          this.clearPath();
          selectLasso(this.m, polygon);
        } else if (path) {
          this.clearPath();
        } else if (drag && moved < 6) {
          pin(this, local(event), event);
        }
        if (pointers.size < 2) pinch = null;
        drag = path = null;
      };
      this.box.addEventListener("pointerup", end);
      this.box.addEventListener("pointercancel", end);
      this.box.addEventListener("pointerleave", (event) => { if (event.pointerType === "mouse" && !pointers.size) hideTip(); });
      this.box.addEventListener("wheel", (event) => {
        event.preventDefault();
        this.zoom(Math.exp(-event.deltaY * (event.deltaMode ? 0.05 : 0.0015)), local(event));
      }, { passive: false });
      this.box.addEventListener("dblclick", () => { Object.assign(this, { scale: 1, tx: 0, ty: 0 }); this.redraw(); });
    }

    zoom(factor, [px, py]) {
      const next = Math.min(400, Math.max(0.5, this.scale * factor));
      const f = next / this.scale;
      const ux = (px - this.w / 2) / this.unit, uy = (this.h / 2 - py) / this.unit;
      this.tx = ux - (ux - this.tx) * f;
      this.ty = uy - (uy - this.ty) * f;
      this.scale = next;
      this.moved();
    }

    drawPath(path) {
      const c = this.ink.getContext("2d");
      c.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
      c.clearRect(0, 0, this.w, this.h);
      c.beginPath();
      path.forEach(([x, y], i) => (i ? c.lineTo(x, y) : c.moveTo(x, y)));
      c.closePath();
      c.fillStyle = "rgba(37, 99, 235, 0.10)";
      c.strokeStyle = "#1d4ed8";
      c.lineWidth = 1.5;
      c.fill();
      c.stroke();
    }

    clearPath() { this.ink.getContext("2d").clearRect(0, 0, this.ink.width, this.ink.height); }
  }

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }

  // --- colours -------------------------------------------------------------------------------------

  function coloursOf(view) {  // RGBA per point, in the view's buffer order: the mode's colours, greyed outside the selection
    const mode = state.colour, density = mode === "density";
    const made = [mode, state.field, state.labels, state.shared];  // what the colours are made of, compared as objects
    if (!view.baseOf || made.some((x, i) => x !== view.baseOf[i])) { view.base = baseColours(view); view.baseOf = made; }
    if (!state.mask) return view.base;
    const out = view.base.slice(), words = new Uint32Array(out.buffer), mask = state.mask, order = view.order;
    const grey = new Uint32Array(new Uint8Array([...GREY, density ? 80 : 140]).buffer)[0];  // RGBA as one word
    for (let k = 0; k < view.n; k++) if (!mask[order ? order[k] : k]) words[k] = grey;  // in buffer order
    return out;
  }

  function baseColours(view) {  // each point's colour in the mode chosen (a cluster's, a column's value's, ...)
    const n = view.n, out = new Uint8Array(n * 4), slot = view.slot;
    const mode = state.colour;
    const ramp = (share) => [Math.round(220 - 170 * share), Math.round(60 + 80 * share), Math.round(60 + 180 * share)];
    const field = state.field, about = field && state.meta.fields[state.fieldAt];
    const low = about && about.kind !== "category" ? about.min : 0, span = about && about.max > about.min ? about.max - about.min : 1;
    for (let i = 0; i < n; i++) {
      let rgb;
      if (field) {  // one of the corpus's own columns: a category's palette, a number's or date's ramp; none grey
        const value = field[i];
        if (about.kind === "category") rgb = value === 65535 ? NONE : PALETTE[value % PALETTE.length];
        else rgb = Number.isNaN(value) ? NONE : ramp((value - low) / span);  // the smallest red, the largest blue
      } else if (mode === "label" && state.labels) rgb = PALETTE[state.labels[i] % PALETTE.length];
      else if (mode === "shared" && state.shared) rgb = ramp(state.shared[i] / 10);
      else if (mode === "density") rgb = [120, 190, 255];
      else rgb = PALETTE[view.clusters[i] % PALETTE.length];
      const at = 4 * (slot ? slot[i] : i);
      out[at] = rgb[0]; out[at + 1] = rgb[1]; out[at + 2] = rgb[2]; out[at + 3] = 255;
    }
    return out;
  }

  function repaint() {
    for (const view of state.views) view.paint(coloursOf(view));
    drawLegend();
  }

  // a number as people write it: whole numbers under 10,000 (a year, a rating) without a thousands separator
  const plainNumber = (x) => (Number.isInteger(x) && Math.abs(x) < 10000 ? String(x) : x.toLocaleString("en"));

  function drawLegend() {
    const box = $("#legend");
    if (state.colour === "shared") {
      const [a, b] = state.pair.map((m) => state.meta.models[m].label);
      box.innerHTML = `<span class="ramp"></span> neighbours shared by ${escapeHtml(a)} and ${escapeHtml(b)}: 0 of 10 (red) to 10 of 10 (blue)`;
    } else if (state.field) {
      const about = state.meta.fields[state.fieldAt];
      if (about.kind === "category") {
        box.innerHTML = about.categories.slice(0, 12).map((name, i) => `<span class="key"><i style="background:rgb(${PALETTE[i % PALETTE.length]})"></i>`
          + `${escapeHtml(name)} <span class="muted">${about.counts[i].toLocaleString()}</span></span>`).join("")
          + (about.categories.length > 12 ? `<span class="muted">and ${about.categories.length - 12} more</span>` : "")
          + (about.missing ? `<span class="key"><i style="background:rgb(${NONE})"></i>none <span class="muted">${about.missing.toLocaleString()}</span></span>` : "");
      } else {
        const shown = (v) => (about.kind === "date" ? new Date(Math.round(v * 86400) * 1000).toISOString().slice(0, 10) : plainNumber(Number(v.toPrecision(4))));
        box.innerHTML = `<span class="ramp"></span> ${escapeHtml(about.name)}: ${shown(about.min)} (red) to ${shown(about.max)} (blue)`
          + (about.missing ? `; ${about.missing.toLocaleString()} without one (light grey)` : "");
      }
    } else if (state.colour === "label") {
      const names = state.meta.labels || [];
      box.innerHTML = names.slice(0, 12).map((name, i) => `<span class="key"><i style="background:rgb(${PALETTE[i % PALETTE.length]})"></i>${escapeHtml(name)}</span>`).join("")
        + (names.length > 12 ? `<span class="muted">and ${names.length - 12} more</span>` : "");
    } else {
      box.textContent = state.colour === "density" ? "Brighter where more sentences lie." : "Colours are each model's own k-means clusters, named by their most distinctive words.";
    }
  }

  // --- hover, tap, tooltip ------------------------------------------------------------------------

  let hoverTimer = 0, tipRow = -1;
  function hover(view, at, event) {
    clearTimeout(hoverTimer);
    hoverTimer = setTimeout(() => {
      const row = view.nearest(at[0], at[1], 8);
      if (row < 0) { hideTip(); return; }
      showTip(view, row, event.clientX, event.clientY);
    }, 15);
  }

  function pin(view, at, event) {
    const row = view.nearest(at[0], at[1], event.pointerType === "mouse" ? 8 : 18);
    if (row < 0) { hideTip(); state.focus = -1; state.views.forEach((v) => v.placeMarks()); return; }
    state.focus = row;
    state.views.forEach((v) => v.placeMarks());
    showTip(view, row, event.clientX, event.clientY);
  }

  async function sentenceOf(row) {
    if (!sentences.has(row)) sentences.set(row, source.sentence(row));
    return sentences.get(row);
  }

  async function showTip(view, row, x, y) {
    tipRow = row;
    const asked = performance.now();
    let found;
    try { found = await sentenceOf(row); } catch (error) { say(error.message, "error"); return; }
    if (tipRow !== row) return;
    const tip = $("#tip");
    const cluster = found.clusters[view.m];
    const words = cluster && cluster.words.length ? cluster.words.slice(0, 3).join(", ") : "";
    const shared = state.shared && state.colour === "shared" ? `<div class="muted">${state.shared[row]} of 10 neighbours shared</div>` : "";
    tip.innerHTML = `<div class="text">${escapeHtml(found.text)}</div>`
      + `<div class="muted">#${row.toLocaleString()}${found.label != null ? " · " + escapeHtml(found.label) : ""}`
      + `${words ? " · " + escapeHtml(words) : ""}</div>${shared}`;
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = `${Math.max(4, Math.min(window.innerWidth - w - 4, x + 12))}px`;
    tip.style.top = `${y + 16 + h > window.innerHeight ? Math.max(4, y - h - 12) : y + 16}px`;
    state.timings.tip = performance.now() - asked;
    tip.dataset.row = String(row);
  }

  function hideTip() { tipRow = -1; $("#tip").hidden = true; }
  // a tapped tooltip is fixed to the screen: a scroll of the page or a panel (a phone's table) takes it away
  window.addEventListener("scroll", () => { if (!$("#tip").hidden) hideTip(); }, { passive: true, capture: true });

  // --- selection -----------------------------------------------------------------------------------

  function selectLasso(m, polygon) {
    // the link writes each corner as JavaScript's shortest exact form of the number: reopened, it is the same
    // polygon, so the same rows
    const started = performance.now();
    const rows = state.views[m].inside(polygon);
    return select(rows, m, started, `lasso=${m}:${polygon.map(([x, y]) => `${x},${y}`).join(";")}`);
  }

  // What is shown selected: a lasso's or a list's rows (a click in "Where they disagree", a search's matches)
  // that pass the chosen facets, or the facets' rows alone. The address always names it: its lasso or rows,
  // and its facets; none when nothing is selected.
  async function select(rows, from = -1, started = performance.now(), link = null) {
    state.base = rows && rows.length ? rows : null;
    state.baseLink = state.base ? link || `rows=${Array.from(rows).join(",")}` : null;
    state.from = state.base ? from : -1;
    return refresh(started);
  }

  async function refresh(started = performance.now()) {
    const facets = state.facets ? state.facets.list() : [];
    let rows = state.base;
    if (facets.length) {
      try { rows = await source.passing(facets, state.base); } catch (error) { say(error.message, "error"); return 0; }
    }
    state.selection = rows && (rows.length || facets.length) ? rows : null;
    state.mask = null;
    if (state.selection) {
      const mask = state.mask = new Uint8Array(state.meta.n);
      for (let i = 0; i < rows.length; i++) mask[rows[i]] = 1;
    }
    const chosen = performance.now();
    const link = [state.baseLink, ...(state.facets ? state.facets.toLink() : [])].filter(Boolean).join("&");
    history.replaceState(null, "", `${location.pathname}${location.search}${link ? `#${link}` : ""}`);
    $("#clear").disabled = !state.base;
    state.page = 0;
    // the table first: its sentences' chunk is fetched before the maps' next frame, which a CPU-drawn WebGL
    // (SwiftShader) takes up to 0.6 s to draw at a million points, holds the page's thread
    await fillTable();
    const tabled = performance.now();
    repaint();
    const now = performance.now();  // the page's own work; the maps' frame follows it
    Object.assign(state.timings, { select: now - started, chosen: chosen - started, table: tabled - chosen, painted: now - tabled });
    showTallies(facets);  // after the maps are redrawn
    return state.timings.select;
  }

  function showTallies(facets) {  // each facet's counts among what the other facets and the selection leave
    if (!state.facets) return;
    source.tallies(facets, state.base, state.facets.BINS).then((found) => state.facets.show(found))
      .catch((error) => say(error.message, "error"));
  }

  async function fillTable() {
    const section = $("#selection");
    if (!state.selection) { section.hidden = true; return; }
    let answer;
    try {
      answer = await source.selection(state.selection, state.page, PAGE, state.filter);
    } catch (error) { say(error.message, "error"); return; }
    section.hidden = false;
    const where = state.from >= 0 ? ` in ${state.meta.models[state.from].label}'s map` : "";
    const named = state.facets ? state.facets.names() : [];
    $("#sel-title").textContent = state.base ? `${answer.count.toLocaleString()} sentences selected${where}`
      + (named.length ? ` with the chosen ${named.join(", ")}` : "")
      : `${answer.count.toLocaleString()} sentences with the chosen ${named.join(", ")}`;
    $("#counts").innerHTML = answer.counts.map((model) => `<div class="count"><b>${escapeHtml(model.model)}</b>: `
      + model.clusters.slice(0, 5).map((c) => `<span class="chip" title="cluster ${c.cluster}: ${c.size.toLocaleString()} sentences">`
        + `${escapeHtml(c.words.slice(0, 2).join(" · ") || "cluster " + c.cluster)} <b>${Math.round(100 * c.count / answer.count)}%</b></span>`).join(" ")
      + (model.clusters.length > 5 ? ` <span class="muted">+${model.clusters.length - 5} clusters</span>` : "") + "</div>").join("");
    const body = $("#table tbody");
    body.innerHTML = answer.rows.map((row) => `<tr data-row="${row.row}"><td>${row.row.toLocaleString()}</td>`
      + `<td>${escapeHtml(row.text)}${row.label != null ? ` <span class="muted">(${escapeHtml(row.label)})</span>` : ""}`
      + `${row.fields.some((v) => v) ? `<div class="fields muted">${row.fields.map((v, f) => (v ? `${escapeHtml(state.meta.fields[f].name)}: ${escapeHtml(v)}` : "")).filter(Boolean).join(" · ")}</div>` : ""}</td></tr>`).join("")
      || `<tr><td colspan="2" class="muted">${answer.count ? "No selected sentence has those words." : "No sentence passes every filter."}</td></tr>`;
    $("#page").textContent = `page ${answer.page + 1} of ${answer.pages} · ${answer.matching.toLocaleString()} shown`;
    $("#prev").disabled = answer.page === 0;
    $("#next").disabled = answer.page + 1 >= answer.pages;
    state.page = answer.page;
  }

  async function exportSelection() {
    if (!state.selection) return;
    try {
      const url = URL.createObjectURL(await source.exported(state.selection));
      const link = el("a", { href: url, download: `${(state.meta.name || "corpus").replace(/\W+/g, "-")}-selection.csv` });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 5000);
    } catch (error) { say(error.message, "error"); }
  }

  // --- comparing two models -----------------------------------------------------------------------

  async function loadShared() {
    const [a, b] = state.pair;
    const key = `${a}-${b}`;
    if (state.sharedKey === key) return true;
    const labels = state.pair.map((m) => state.meta.models[m].label).join(" and ");
    const asking = `Finding each sentence's 10 nearest neighbours under ${labels} (computed once, then kept)`;
    say(`${asking}…`, "busy");
    // while it computes, its step, share and time left, every second
    const poll = setInterval(async () => {
      try {
        const work = await source.working(a, b);
        if (work && state.sharedKey !== key) say(`${asking}: ${work.what} · ${Math.round(100 * work.fraction)}%${work.left ? ` · ${work.left} left` : ""}`, "busy");
      } catch (error) { /* the answer itself says what went wrong */ }
    }, 1000);
    try {
      state.shared = await source.shared(a, b);
      clearInterval(poll);
      state.sharedKey = key;
      let total = 0;
      for (const v of state.shared) total += v;
      say(`${labels} share ${(10 * total / state.shared.length / 10).toFixed(1)} of each sentence's 10 nearest neighbours on average.`);
      return true;
    } catch (error) { clearInterval(poll); say(error.message, "error"); return false; }
  }

  async function showDisagreements() {
    if (state.meta.models.length < 2) { say("Map the corpus with two models to compare them.", "error"); return; }
    const [a, b] = state.pair;
    if (!(await loadShared())) return;
    let found;
    try { found = await source.disagree(a, b); } catch (error) { say(error.message, "error"); return; }
    const section = $("#compare");
    section.hidden = false;
    $("#cmp-title").textContent = `Where ${found.a} and ${found.b} disagree most`;
    $("#cmp-summary").textContent = `On average they share ${(found.mean_shared * 10).toFixed(1)} of a sentence's 10 nearest neighbours. These sentences share the fewest; click one to select it and its neighbours in every map.`;
    $("#cmp-list").innerHTML = found.rows.map((row) => `<li data-rows="${[row.row, ...row.a.map((n) => n.row), ...row.b.map((n) => n.row)].join(",")}" data-row="${row.row}">`
      + `<div class="text">${escapeHtml(row.text)} <span class="muted">(${row.shared} of 10 shared)</span></div>`
      + `<div class="sides"><div><b>${escapeHtml(found.a)}</b><ul>${row.a.map((n) => `<li>${escapeHtml(n.text)}</li>`).join("")}</ul></div>`
      + `<div><b>${escapeHtml(found.b)}</b><ul>${row.b.map((n) => `<li>${escapeHtml(n.text)}</li>`).join("")}</ul></div></div></li>`).join("");
    section.scrollIntoView({ block: "nearest" });
  }

  // --- page ----------------------------------------------------------------------------------------

  async function loadField(mode) {  // "field:<f>": that column's values, for the colours and the legend
    state.field = null;
    if (!mode.startsWith("field:")) return true;
    const f = Number(mode.slice(6));
    try { state.field = await source.fieldValues(f); state.fieldAt = f; return true; } catch (error) { say(error.message, "error"); return false; }
  }

  function setColour(mode) {
    state.colour = mode;
    $("#colour").value = mode;
    const query = new URLSearchParams(location.search);
    query.set("colour", mode);
    history.replaceState(null, "", `${location.pathname}?${query}${location.hash}`);
    repaint();
  }

  function showModel(m) {  // narrow screens show one map at a time
    state.active = m;
    document.querySelectorAll("#tabs button").forEach((b, i) => b.setAttribute("aria-pressed", String(i === m)));
    state.views.forEach((view, i) => view.panel.classList.toggle("active", i === m));
  }

  function wire() {
    $("#colour").addEventListener("change", async (event) => {
      const mode = event.target.value;
      if (mode === "shared" && !(await loadShared())) { event.target.value = state.colour; return; }
      if (mode === "label" && !state.labels) { say("This corpus has no labels; colour it by clusters.", "error"); event.target.value = state.colour; return; }
      if (!(await loadField(mode))) { event.target.value = state.colour; return; }
      setColour(mode);
    });
    $("#pair").addEventListener("change", async (event) => {
      state.pair = event.target.value.split(",").map(Number);
      if (state.colour === "shared" && (await loadShared())) repaint();
      if (!$("#compare").hidden) showDisagreements();
    });
    $("#lasso").addEventListener("click", () => {
      state.lasso = !state.lasso;
      $("#lasso").setAttribute("aria-pressed", String(state.lasso));
      document.body.classList.toggle("lassoing", state.lasso);
    });
    $("#clear").addEventListener("click", () => select(null));
    $("#disagree").addEventListener("click", showDisagreements);
    $("#export").addEventListener("click", exportSelection);
    $("#prev").addEventListener("click", () => { state.page -= 1; fillTable(); });
    $("#next").addEventListener("click", () => { state.page += 1; fillTable(); });
    let filterTimer = 0;
    $("#filter").addEventListener("input", (event) => {
      clearTimeout(filterTimer);
      filterTimer = setTimeout(() => { state.filter = event.target.value; state.page = 0; fillTable(); }, 250);
    });
    $("#table").addEventListener("click", (event) => {
      const row = event.target.closest("tr[data-row]");
      if (!row) return;
      state.focus = Number(row.dataset.row);
      state.views.forEach((v) => v.placeMarks());
    });
    $("#cmp-list").addEventListener("click", (event) => {
      const item = event.target.closest("li[data-rows]");
      if (!item) return;
      state.focus = Number(item.dataset.row);
      select(Int32Array.from(new Set(item.dataset.rows.split(",").map(Number))).sort());
    });
  }

  async function applyLink() {
    const hash = new URLSearchParams(location.hash.slice(1));
    const facets = state.facets ? state.facets.fromLink(hash.getAll("facet")) : [];
    const lasso = hash.get("lasso");
    if (lasso && lasso.includes(":")) {
      const [m, points] = lasso.split(":");
      const polygon = points.split(";").map((p) => p.split(",").map(Number)).filter((p) => p.length === 2 && p.every(Number.isFinite));
      if (state.views[Number(m)] && polygon.length > 2) { await selectLasso(Number(m), polygon); return; }
    }
    const rows = hash.get("rows");
    if (rows) {
      const chosen = rows.split(",").map(Number).filter((r) => Number.isInteger(r) && r >= 0 && r < state.meta.n);
      await select(Int32Array.from(new Set(chosen)).sort());
    } else if (facets.length) await refresh();
    else showTallies([]);
  }

  // --- search by meaning (a published map: atlas_search.js embeds the query in this page) ------------

  function wireSearch(meta) {
    const models = (meta.search || []).filter((m) => meta.models[m]);
    if (!window.atlasSearch || !models.length) return;
    $("#search").hidden = false;
    // the menu names the models by their short keys (the side bar is narrow), the line under it what the first
    // search with the chosen one downloads, once
    $("#search-model").innerHTML = models.map((m) => `<option value="${m}" title="${escapeHtml(meta.models[m].label)}">`
      + `${escapeHtml(meta.models[m].key || meta.models[m].label)}</option>`).join("");
    $("#search-model-box").hidden = models.length < 2;
    const cost = () => {
      const m = Number($("#search-model").value), bytes = (meta.search_bytes || {})[m];
      $("#search-cost").textContent = bytes && !searched.has(m)
        ? `The first search with ${meta.models[m].key || meta.models[m].label} downloads ${Math.max(1, Math.round(bytes / 1e6))} MB, once.` : "";
    };
    const searched = new Set();
    $("#search-model").addEventListener("change", cost);
    cost();
    $("#search-form").addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = $("#query").value.trim();
      if (!text) { say("Type a sentence to search for.", "error"); return; }
      const m = Number($("#search-model").value), label = meta.models[m].label;
      say(`Searching ${meta.n.toLocaleString()} sentences by meaning under ${label}…`, "busy");
      try {
        const found = await window.atlasSearch.search(m, meta.n, text, 10);
        searched.add(m);
        cost();
        const rows = found.rows.map((r) => r.row);
        const texts = await source.texts(rows);
        $("#results").innerHTML = found.rows.map((r, i) => `<li data-row="${r.row}">${escapeHtml(texts[i])} `
          + `<span class="muted">${r.score.toFixed(3)}</span></li>`).join("");
        state.timings.search = found.ms;
        await select(Int32Array.from(rows).sort());
        say(`The ${rows.length} sentences nearest “${text}” under ${label}, found in this page in ${Math.max(1, Math.round(found.ms))} ms; `
          + "they are selected in every map.");
      } catch (error) { say(error.message, "error"); }
    });
    $("#results").addEventListener("click", (event) => {
      const item = event.target.closest("li[data-row]");
      if (!item) return;
      state.focus = Number(item.dataset.row);
      state.views.forEach((v) => v.placeMarks());
    });
  }

  function offerAgreement() {  // in the app, a map whose agreement is not computed yet: a button computes it, once
    if (!source.canAgree()) return;
    const go = $("#agreement-go");
    $("#agreement").hidden = go.hidden = false;
    const names = state.meta.fields.filter((about) => about.kind === "category").map((about) => about.name).join(", ");
    go.textContent = `Compare each model with ${names}`;
    go.addEventListener("click", async () => {
      go.disabled = true;
      say(`Finding each sentence's 10 nearest neighbours under each model and comparing them with ${names} (computed once, then kept)…`, "busy");
      try {
        showAgreement(await source.agree());
        go.hidden = true;
        say(`How each model's neighbours agree with ${names}: below, against chance.`);
      } catch (error) { say(error.message, "error"); go.disabled = false; }
    });
  }

  function showAgreement(found) {  // each model against each category column (atlas_agreement.js)
    if (!found || !found.fields.length) return;
    $("#agreement").hidden = false;
    window.atlasAgreement($("#agreement-tables"), found);
  }

  function showLinks(site) {  // a published folder's links: its app (--app-url), the playground, the talk
    if (!site) return;
    const links = [site.app_url ? el("a", { class: "home", href: site.app_url, title: "The app this map comes from", text: "SBERT demo" })
      : el("span", { class: "home", text: "SBERT demo" })];
    if (site.playground) links.push(el("a", { class: "home", href: "playground.html", title: "Type sentences and compare them under each model", text: "Playground" }));
    if (site.talk) links.push(el("a", { class: "home", href: "talk/", title: "The talk: why siamese sentence embeddings beat naive ones", text: "The talk" }));
    $("#home").replaceChildren(...links);
  }

  async function start() {
    if (mapId && !/^[0-9a-f]{16,64}$/.test(mapId)) {
      say("That is not a map's id: open a map from the app (Explore → Corpus map → “Open the map view”).", "error");
      return;
    }
    const meta = state.meta = await source.meta();
    const site = await source.site();
    showLinks(site);
    document.title = `${(site && site.title) || meta.name} · corpus map`;
    $("#title").textContent = `${meta.name} · ${meta.n.toLocaleString()} sentences`;
    const loaded = await Promise.all(meta.models.map((model, m) => Promise.all([
      source.points(m), source.clusters(m)])));
    if (meta.labels) state.labels = await source.labels();
    state.timings.data = performance.now() - state.timings.start;
    meta.models.forEach((model, m) => {
      state.views.push(new MapView(m, model, loaded[m][0], loaded[m][1]));
      $("#tabs").append(el("button", { type: "button", "aria-pressed": String(m === 0), text: model.label }));
    });
    document.querySelectorAll("#tabs button").forEach((b, i) => b.addEventListener("click", () => showModel(i)));
    document.body.classList.toggle("single", meta.models.length === 1);
    const pairs = [];
    for (let a = 0; a < meta.models.length; a++) for (let b = a + 1; b < meta.models.length; b++) pairs.push([a, b]);
    // a phone's menu names the models by their short keys (a label such as "Static, distilled from
    // all-MiniLM-L6-v2" would be cut); the full labels stay in the option's title
    const narrow = window.matchMedia("(max-width: 700px)").matches;
    const named = (m) => escapeHtml(narrow ? meta.models[m].key || meta.models[m].label : meta.models[m].label);
    $("#pair").innerHTML = pairs.map(([a, b]) => `<option value="${a},${b}" title="${escapeHtml(meta.models[a].label)} vs `
      + `${escapeHtml(meta.models[b].label)}">${named(a)} vs ${named(b)}</option>`).join("");
    $("#pair-box").hidden = $("#disagree").hidden = pairs.length === 0;
    if (!meta.labels) $("#colour option[value=label]").disabled = true;
    (meta.fields || []).forEach((about, f) => $("#colour").append(el("option", { value: `field:${f}`, text: about.name })));
    const agreement = await source.agreement();
    if (agreement) showAgreement(agreement); else offerAgreement();
    if ((meta.fields || []).length || (meta.fields_left || []).length) {
      state.facets = window.atlasFacets({ meta, palette: PALETTE, number: plainNumber, onChange: () => { state.refreshed = refresh(); } });
    }
    if (!pairs.length) $("#colour option[value=shared]").disabled = true;
    showModel(0);
    wire();
    wireSearch(meta);
    const asked = params.get("colour");
    const pair = (params.get("pair") || "").split(",").map(Number);
    if (pair.length === 2 && pairs.some(([a, b]) => a === pair[0] && b === pair[1])) { state.pair = pair; $("#pair").value = pair.join(","); }
    state.colour = asked === "label" && state.labels ? "label" : asked === "density" ? "density"
      : asked && asked.startsWith("field:") && meta.fields && meta.fields[Number(asked.slice(6))] && (await loadField(asked)) ? asked : "cluster";
    $("#colour").value = state.colour;
    repaint();
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    state.timings.paint = performance.now() - state.timings.start;
    say(`${meta.models.length} map${meta.models.length > 1 ? "s" : ""} of ${meta.n.toLocaleString()} sentences drawn. Hover or tap a point to read it; lasso to select.`);
    if (asked === "shared" && pairs.length && (await loadShared())) setColour("shared");
    await applyLink();
    document.body.dataset.ready = "1";
  }

  window.atlas = {
    state, select: (rows) => select(Int32Array.from(new Set(rows)).sort()),
    lasso: (m, polygon) => selectLasso(m, polygon),
    screenOf: (m, row) => {
      const view = state.views[m], r = view.box.getBoundingClientRect();
      const [x, y] = view.toScreen(view.xy[2 * row], view.xy[2 * row + 1]);
      return [r.left + x, r.top + y];
    },
    ready: start().catch((error) => { say(error.message, "error"); document.body.dataset.ready = "error"; }),
  };
})();
