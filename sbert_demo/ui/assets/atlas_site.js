// A published map (python -m sbert_demo publish): the map view's data read from the folder's files instead of
// the app's server. What the server computes per request is computed here the same way (sbert_demo/atlas/
// store.py): a selection's table page, its word filter and its counts per cluster, a sentence with its
// clusters, the CSV export; shared neighbours and where the models disagree were written at publish time.
// Sentences come in chunks (data/texts/<c>.json.gz, gzipped JSON), fetched when a hover, a table page or a filter needs them.
"use strict";
(() => {
  const DATA = "data/";
  let meta = null, csv = null;
  const clusters = [], chunks = new Map();
  let labels = null;

  const damaged = (name) => new Error(`This published map is incomplete: ${name} is missing or damaged. `
    + "Publish the map again (python -m sbert_demo publish) and upload the whole folder.");

  async function fetched(name) {
    let response;
    try { response = await fetch(DATA + name); } catch (error) { throw damaged(name); }
    if (!response.ok) throw damaged(name);
    return response;
  }

  async function json(name) {
    const response = await fetched(name);
    try { return await response.json(); } catch (error) { throw damaged(name); }
  }

  async function packedJson(name) {  // a gzipped JSON file (sbert_demo/publish/packing.py)
    const buffer = await (await fetched(name)).arrayBuffer();
    try { return JSON.parse(new TextDecoder().decode(await gunzipped(buffer))); } catch (error) { throw damaged(name); }
  }

  async function binary(name, Type, length) {
    const buffer = await (await fetched(name)).arrayBuffer();
    if (buffer.byteLength !== length * Type.BYTES_PER_ELEMENT) throw damaged(name);
    return new Type(buffer);
  }

  async function gunzipped(buffer) {  // a file the folder keeps gzipped (sbert_demo/publish/packing.py), unpacked;
    // as it is where the host already unpacked it (sent with Content-Encoding: gzip)
    const head = new Uint8Array(buffer, 0, Math.min(2, buffer.byteLength));
    if (head[0] !== 0x1f || head[1] !== 0x8b) return buffer;
    return new Response(new Blob([buffer]).stream().pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
  }

  function once(map, key, make) {  // one request per file, however many ask at once; a failure is asked again
    if (!map.has(key)) {
      const promise = make();
      map.set(key, promise);
      promise.catch(() => map.delete(key));
    }
    return map.get(key);
  }

  async function texts(rows) {  // the sentences of ``rows``, in their order, from the chunks that hold them
    const size = meta.chunk;
    const wanted = [...new Set(Array.from(rows, (row) => Math.floor(row / size)))];
    const lists = await Promise.all(wanted.map((c) => once(chunks, c, () => packedJson(`texts/${c}.json.gz`))));
    const byChunk = new Map(wanted.map((c, i) => [c, lists[i]]));
    return Array.from(rows, (row) => {
      const list = byChunk.get(Math.floor(row / size));
      const text = Array.isArray(list) ? list[row % size] : undefined;
      if (typeof text !== "string") throw damaged(`texts/${Math.floor(row / size)}.json.gz`);
      return text;
    });
  }

  const labelOf = (row) => (labels && meta.labels ? meta.labels[labels[row]] : null);
  const wordsOf = (m, cluster) => (meta.models[m].clusters.find((c) => c.cluster === cluster) || { words: [] }).words;

  // A word of the filter at the start of a word in every script; scripts without spaces match anywhere
  // (store.py's word_start).
  const UNSPACED = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}]/u;
  const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  function wordStart(word) {
    const escaped = escapeRegExp(word);
    return new RegExp(UNSPACED.test(word) ? escaped : `(?:^|[^\\p{L}\\p{N}\\p{M}_])${escaped}`, "iu");
  }

  async function matching(rows, query) {
    const words = (query || "").toLowerCase().match(/[\p{L}\p{N}_]+/gu) || [];
    if (!words.length || !rows.length) return rows;
    const patterns = words.map(wordStart);
    const found = await texts(rows);
    return rows.filter((row, i) => patterns.every((pattern) => pattern.test(found[i])));
  }

  function counts(rows) {  // per model, the selection per cluster (largest first, ties by cluster number)
    return meta.models.map((model, m) => {
      const found = new Uint32Array(model.k);
      for (const row of rows) found[clusters[m][row]] += 1;
      const about = new Map(model.clusters.map((c) => [c.cluster, c]));
      const order = [...found.keys()].filter((c) => found[c]).sort((x, y) => found[y] - found[x] || x - y);
      return { model: model.label, clusters: order.map((c) => ({
        cluster: c, count: found[c], size: (about.get(c) || {}).size || 0, words: (about.get(c) || {}).words || [] })) };
    });
  }

  function sorted(rows) {
    return Array.from(new Set(Array.from(rows, Number))).sort((x, y) => x - y);
  }

  function cell(value) {  // Python's csv module: quoted when it holds a comma, a quote or a line break
    const text = String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }

  window.atlasSite = {
    async meta() {
      meta = await json("meta.json");
      if (!meta || !Array.isArray(meta.models) || !Number.isInteger(meta.n)) throw damaged("meta.json");
      return meta;
    },
    async points(m) { return binary(`points-${m}.f32`, Float32Array, 2 * meta.n); },
    async clusters(m) { clusters[m] = await binary(`clusters-${m}.u16`, Uint16Array, meta.n); return clusters[m]; },
    async labels() { labels = await binary("labels.u16", Uint16Array, meta.n); return labels; },
    async sentence(row) {
      const [text] = await texts([row]);
      return { row, text, label: labelOf(row),
        clusters: meta.models.map((model, m) => ({ cluster: clusters[m][row], words: wordsOf(m, clusters[m][row]) })) };
    },
    async selection(rows, page, size, query) {
      rows = sorted(rows);
      const shown = await matching(rows, query);
      const pages = Math.max(1, Math.ceil(shown.length / size));
      page = Math.max(0, Math.min(page, pages - 1));
      const chosen = shown.slice(page * size, (page + 1) * size);
      const found = await texts(chosen);
      return { count: rows.length, matching: shown.length, page, pages, counts: counts(rows),
        rows: chosen.map((row, i) => ({ row, text: found[i], label: labelOf(row), clusters: meta.models.map((_, m) => clusters[m][row]) })) };
    },
    async exported(rows) {  // what the server's /export writes (store.py's Atlas.csv), byte for byte
      rows = sorted(rows);
      if (!rows.length) throw new Error("Select some sentences first (lasso or box on a map), then export them.");
      csv = csv || await json("csv.json");
      const found = await texts(rows);
      const lines = [["row", "sentence", csv.label_name, ...meta.models.map((m) => `cluster (${m.label})`)].map(cell).join(",")];
      rows.forEach((row, i) => {
        const text = csv.rows[String(row)] !== undefined ? csv.rows[String(row)] : found[i];
        const label = labels && meta.labels ? csv.labels[labels[row]] : csv.missing;
        lines.push([row, text, label, ...meta.models.map((_, m) => clusters[m][row])].map(cell).join(","));
      });
      return new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv" });
    },
    async shared(a, b) { return binary(`shared-${a}-${b}.u8`, Uint8Array, meta.n); },
    async working() { return null; },  // computed at publish time: nothing is under way here
    async disagree(a, b) { return json(`disagree-${a}-${b}.json`); },
    texts, damaged, once, gunzipped,
  };
})();
