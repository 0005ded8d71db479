// A map's data, read from its folder's files (sbert_demo/atlas/store.py), the same in the app (served at
// /atlas/data/<id>/) and in a published folder (data/): points, clusters and labels as binary arrays, sentences
// in chunks (texts/<c>.json.gz, gzipped JSON) fetched when a hover, a table page or a filter needs them. What a
// visitor's selection asks is computed here, and only here: its table page, the word filter, its counts per
// cluster, its CSV. Two models' comparison is a file too; where it is missing, the app is asked to write it.
"use strict";
window.atlasData = ({ base, api }) => {
  let meta = null, csv = null;
  const clusters = [], chunks = new Map(), fields = new Map();
  let labels = null;

  const damaged = (name) => new Error(api
    ? `This map's file ${name} is missing on the server (its cache may have been cleared): map the corpus again in Explore → Corpus map.`
    : `This published map is incomplete: ${name} is missing or damaged. `
      + "Publish the map again (python -m sbert_demo publish) and upload the whole folder.");

  async function fetched(name, path = base) {
    let response;
    try { response = await fetch(path + name); } catch (error) { throw damaged(name); }
    if (!response.ok) throw damaged(name);
    return response;
  }

  async function json(name) {
    const response = await fetched(name);
    try { return await response.json(); } catch (error) { throw damaged(name); }
  }

  async function packedJson(name) {  // a gzipped JSON file
    const buffer = await (await fetched(name)).arrayBuffer();
    try { return JSON.parse(new TextDecoder().decode(await gunzipped(buffer))); } catch (error) { throw damaged(name); }
  }

  async function binary(name, Type, length) {
    const buffer = await (await fetched(name)).arrayBuffer();
    if (buffer.byteLength !== length * Type.BYTES_PER_ELEMENT) throw damaged(name);
    return new Type(buffer);
  }

  async function gunzipped(buffer) {  // a file the folder keeps gzipped, unpacked; as it is where the host already
    // unpacked it (sent with Content-Encoding: gzip)
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

  // The corpus's own columns (meta.fields): a category's codes (65535: none), a number's or a date's values (days
  // since 1970; NaN: none), each file fetched once, when a colour, the table or the CSV first needs it.
  // Kept in the fewest bytes (meta's "type", its "none" code); read as one form: codes as Uint16Array, values as
  // Float32Array.
  const STORED = { u8: Uint8Array, u16: Uint16Array, i16: Int16Array, f32: Float32Array };
  const fieldValues = (f) => once(fields, f, async () => {
    const about = meta.fields[f], kept = await binary(about.file, STORED[about.type] || Float32Array, meta.n);
    if (about.type === "u16" || about.type === "f32" || !about.type) return kept;
    const out = about.kind === "category" ? new Uint16Array(meta.n) : new Float32Array(meta.n);
    const none = about.kind === "category" ? 65535 : NaN;
    for (let row = 0; row < meta.n; row++) out[row] = kept[row] === about.none ? none : kept[row];
    return out;
  });
  const allFields = () => Promise.all((meta.fields || []).map((_, f) => fieldValues(f)));
  function fieldText(f, values, row) {  // a row's value as the table and the CSV write it ("" where none)
    const about = meta.fields[f], value = values[row];
    if (about.kind === "category") return value === 65535 ? "" : about.categories[value];
    if (Number.isNaN(value)) return "";
    if (about.kind === "date") return new Date(Math.round(value * 86400) * 1000).toISOString().slice(0, value % 1 ? 16 : 10);
    return String(Number(value.toPrecision(7)));  // float32 kept: its shortest form to 7 digits
  }
  const wordsOf = (m, cluster) => (meta.models[m].clusters.find((c) => c.cluster === cluster) || { words: [] }).words;

  // The word filter: each word of the query at the start of a word of the sentence, in any case and any script;
  // scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, and the marks written with
  // them) and emoji match anywhere. An emoji is a word of its own ("🐶"), kept whole with its joiners and
  // modifiers ("👨‍👩‍👧"); so are the letters of a script written without spaces.
  const UNSPACED = "\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}\\p{Script_Extensions=Katakana}"
    + "\\p{Script_Extensions=Thai}\\p{Script_Extensions=Lao}\\p{Script_Extensions=Khmer}\\p{Script_Extensions=Myanmar}";
  const EMOJI = "\\p{Extended_Pictographic}(?:[\\u{FE0F}\\u{20E3}\\p{Emoji_Modifier}]|\\u{200D}\\p{Extended_Pictographic})*"
    + "|\\p{Regional_Indicator}{1,2}";
  const WORD = new RegExp(`${EMOJI}|[${UNSPACED}\\p{M}]+|[\\p{L}\\p{N}\\p{M}_]+`, "gu");
  const ANYWHERE = new RegExp(`^(?:${EMOJI}|[${UNSPACED}])`, "u");
  const escapeRegExp = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const wordStart = (word) => new RegExp(ANYWHERE.test(word) ? escapeRegExp(word)
    : `(?:^|[^\\p{L}\\p{N}\\p{M}_])${escapeRegExp(word)}`, "iu");
  const words = (query) => (query || "").toLowerCase().match(WORD) || [];

  async function matching(rows, query) {
    const patterns = words(query).map(wordStart);
    if (!patterns.length || !rows.length) return rows;
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

  function sorted(rows) {  // rows in order, once each (a filter's rows come so already: kept as they are)
    let ordered = rows instanceof Int32Array;
    for (let i = 1; ordered && i < rows.length; i++) ordered = rows[i - 1] < rows[i];
    return ordered ? rows : Array.from(new Set(Array.from(rows, Number))).sort((x, y) => x - y);
  }

  // Facets on the corpus's own columns: per column, the chosen categories ({f, values: [codes]}) or a range
  // ({f, lo, hi}, both included); a row without a value passes none. Each row's failures are counted once, so
  // a column's tally (crossfilter) counts the rows that pass every other facet and the selection ("within").
  function clearFailing(facet, values, ok) {  // ok[row] = 0 for each row that fails the facet (one byte a row)
    const n = meta.n;
    if (facet.values) {
      const allowed = new Uint8Array(65536);
      for (const code of facet.values) allowed[code] = 1;
      for (let row = 0; row < n; row++) ok[row] &= allowed[values[row]];
    } else {
      const { lo, hi } = facet;
      for (let row = 0; row < n; row++) { const v = values[row]; if (!(v >= lo && v <= hi)) ok[row] = 0; }
    }
    return ok;
  }

  async function facetFailures(facets, within) {
    const n = meta.n, failed = new Uint8Array(n), failedAt = new Int8Array(n).fill(-1);
    const columns = await Promise.all(facets.map((facet) => fieldValues(facet.f)));
    facets.forEach((facet, i) => {
      const pass = clearFailing(facet, columns[i], new Uint8Array(n).fill(1));
      for (let row = 0; row < n; row++) if (!pass[row]) { failed[row] += 1; failedAt[row] = i; }
    });
    if (within) {  // outside the selection counts as failing every facet
      const inside = new Uint8Array(n);
      for (const row of within) inside[row] = 1;
      for (let row = 0; row < n; row++) if (!inside[row]) failed[row] = 255;
    }
    return { failed, failedAt };
  }

  function cell(value) {  // as Python's csv module writes it: quoted when it holds a comma, a quote or a line break
    const text = String(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  }

  async function asked(response) {  // the app's answer, or its sentence as an error
    if (response.ok) return response.json();
    let sentence = `The server answered ${response.status}.`;
    try { sentence = (await response.json()).error || sentence; } catch (e) { /* not JSON */ }
    throw new Error(sentence);
  }

  return {
    async meta() {
      try { meta = await json("meta.json"); } catch (error) {
        throw api ? error : new Error("There is no map here: open one from the app (Explore → Corpus map → "
          + "“Open the map view”), or publish one (python -m sbert_demo publish).");
      }
      if (!meta || !Array.isArray(meta.models) || !Number.isInteger(meta.n)) throw damaged("meta.json");
      return meta;
    },
    async site() {  // a published folder's own links (its app, playground, talk); none in the app
      if (api) return null;
      try { const response = await fetch("site.json"); return response.ok ? await response.json() : null; } catch (e) { return null; }
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
      const chosen = Array.from(shown.slice(page * size, (page + 1) * size));
      const [found, columns] = await Promise.all([texts(chosen), allFields()]);
      return { count: rows.length, matching: shown.length, page, pages, counts: counts(rows),
        rows: chosen.map((row, i) => ({ row, text: found[i], label: labelOf(row), clusters: meta.models.map((_, m) => clusters[m][row]),
          fields: columns.map((values, f) => fieldText(f, values, row)) })) };
    },
    async exported(rows) {  // row, sentence, label, each model's cluster; formula-like cells as csv.json keeps them
      rows = sorted(rows);
      if (!rows.length) throw new Error("Select some sentences first (lasso or box on a map), then export them.");
      csv = csv || await json("csv.json");
      const [found, columns] = await Promise.all([texts(rows), allFields()]);
      const named = csv.field_names || (meta.fields || []).map((about) => about.name);
      const lines = [["row", "sentence", csv.label_name, ...meta.models.map((m) => `cluster (${m.label})`), ...named].map(cell).join(",")];
      rows.forEach((row, i) => {
        const text = csv.rows[String(row)] !== undefined ? csv.rows[String(row)] : found[i];
        const label = labels && meta.labels ? csv.labels[labels[row]] : csv.missing;
        lines.push([row, text, label, ...meta.models.map((_, m) => clusters[m][row]),
          ...columns.map((values, f) => (meta.fields[f].kind === "category" && values[row] !== 65535
            ? csv.fields[f][values[row]] : fieldText(f, values, row)))].map(cell).join(","));
      });
      return new Blob([lines.join("\r\n") + "\r\n"], { type: "text/csv" });
    },
    // The rows that pass every facet (in order; all of "within" when no facet is chosen).
    // One byte a row, cleared by each facet in turn (no failure counts: the tallies below need those, not this).
    async passing(facets, within = null) {
      const n = meta.n, ok = new Uint8Array(n);
      if (within) for (let i = 0; i < within.length; i++) ok[within[i]] = 1; else ok.fill(1);
      const columns = await Promise.all(facets.map((facet) => fieldValues(facet.f)));
      facets.forEach((facet, i) => clearFailing(facet, columns[i], ok));
      let count = 0;
      for (let row = 0; row < n; row++) count += ok[row];
      const rows = new Int32Array(count);
      for (let row = 0, at = 0; row < n; row++) if (ok[row]) rows[at++] = row;
      return rows;
    },
    // Per column, its values' counts among the rows that pass the other columns' facets and lie in "within": a
    // category's per value (its codes' order), a number's or a date's in "bins" equal bins from its min to max.
    async tallies(facets, within = null, bins = 32) {
      const { failed, failedAt } = await facetFailures(facets, within);
      const columns = await Promise.all((meta.fields || []).map((_, f) => fieldValues(f)));
      return columns.map((values, f) => {
        const about = meta.fields[f], own = facets.findIndex((facet) => facet.f === f);
        const counts = new Uint32Array(about.kind === "category" ? about.categories.length : bins);
        const width = (about.max - about.min) / bins || 1;
        for (let row = 0; row < meta.n; row++) {
          if (failed[row] && !(failed[row] === 1 && failedAt[row] === own)) continue;
          const v = values[row];
          if (about.kind === "category") { if (v !== 65535) counts[v] += 1; }
          else if (!Number.isNaN(v)) counts[Math.min(bins - 1, Math.floor((v - about.min) / width))] += 1;
        }
        return counts;
      });
    },
    async shared(a, b) {  // per sentence, how many of its 10 nearest neighbours a and b share
      const name = `shared-${a}-${b}.u8`;
      if (api && !(await fetch(base + name, { method: "HEAD" })).ok) {
        await asked(await fetch(`${api}/compare/${a}/${b}`, { method: "POST" }));  // the app writes it, once
      }
      return binary(name, Uint8Array, meta.n);
    },
    async working(a, b) {  // how far the app is in writing a comparison (null: nothing under way)
      return api ? asked(await fetch(`${api}/working/${a}/${b}`)) : null;
    },
    async disagree(a, b) { return json(`disagree-${a}-${b}.json`); },
    async agreement() {  // how each model agrees with the corpus's category columns (null: not computed yet)
      const response = await fetch(base + "agreement.json").catch(() => null);
      return response && response.ok ? response.json() : null;
    },
    canAgree: () => Boolean(api) && (meta.fields || []).some((about) => about.kind === "category"),
    async agree() {  // the app writes it, once (each model's neighbours found, then compared with the columns)
      return asked(await fetch(`${api}/agreement`, { method: "POST" }));
    },
    texts, damaged, once, gunzipped, words, fieldValues,
  };
};
