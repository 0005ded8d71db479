// Search by meaning in a published map (sbert_demo/publish/search.py): the query embedded in this page by
// a static model of the map (BERT's WordPiece tokenizer, then the sum of the tokens' rows in the model's
// table, normalised: the same vectors as Python's within cosine 0.9999), then every sentence's int8 vector
// scored against it. The files come with the first query, never before.
"use strict";
(() => {
  const loaded = new Map();

  // --- BERT's tokenizer, as Hugging Face's tokenizers runs it (BertNormalizer, BertPreTokenizer, WordPiece) ---
  const CONTROL = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}]/u;
  const SPACE = /\s/u;
  const PUNCTUATION = /[\p{P}!-/:-@[-`{-~]/u;
  const MARK = /\p{Mn}/u;
  const chinese = (code) => (code >= 0x4e00 && code <= 0x9fff) || (code >= 0x3400 && code <= 0x4dbf)
    || (code >= 0x20000 && code <= 0x2a6df) || (code >= 0x2a700 && code <= 0x2b73f) || (code >= 0x2b740 && code <= 0x2b81f)
    || (code >= 0x2b820 && code <= 0x2ceaf) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0x2f800 && code <= 0x2fa1f);

  function normalise(text, spec) {
    let out = "";
    for (const c of text) {
      const code = c.codePointAt(0);
      if (spec.clean_text) {
        if (code === 0 || code === 0xfffd || (CONTROL.test(c) && c !== "\t" && c !== "\n" && c !== "\r")) continue;
        if (SPACE.test(c)) { out += " "; continue; }
      }
      out += spec.chinese_chars && chinese(code) ? ` ${c} ` : c;
    }
    if (spec.strip_accents) out = Array.from(out.normalize("NFD")).filter((c) => !MARK.test(c)).join("");
    return spec.lowercase ? out.toLowerCase() : out;
  }

  function words(text) {  // split at white space, each punctuation character a word of its own
    const found = [];
    let word = "";
    for (const c of text) {
      if (SPACE.test(c)) { if (word) found.push(word); word = ""; }
      else if (PUNCTUATION.test(c)) { if (word) found.push(word); found.push(c); word = ""; }
      else word += c;
    }
    if (word) found.push(word);
    return found;
  }

  function tokenize(text, model) {  // token ids, no special tokens (a static model reads none)
    const spec = model.tokenizer, ids = [];
    for (const word of words(normalise(text, spec))) {
      const chars = Array.from(word);
      if (chars.length > spec.max_chars) { ids.push(spec.unk); continue; }
      const pieces = [];
      let start = 0, bad = false;
      while (start < chars.length) {
        let end = chars.length, found = -1;
        while (start < end) {
          const piece = (start > 0 ? spec.prefix : "") + chars.slice(start, end).join("");
          if (model.index.has(piece)) { found = model.index.get(piece); break; }
          end -= 1;
        }
        if (found < 0) { bad = true; break; }
        pieces.push(found);
        start = end;
      }
      if (bad) ids.push(spec.unk); else ids.push(...pieces);
    }
    return ids;
  }

  function embed(text, model) {  // the normalised sum of the tokens' rows
    const d = model.dimension, vector = new Float32Array(d);
    for (const id of tokenize(text, model)) {
      const scale = model.tableScales[id], base = id * d;
      for (let j = 0; j < d; j++) vector[j] += model.table[base + j] * scale;
    }
    let norm = 0;
    for (let j = 0; j < d; j++) norm += vector[j] * vector[j];
    norm = Math.sqrt(norm);
    if (norm > 0) for (let j = 0; j < d; j++) vector[j] /= norm;
    return vector;
  }

  async function files(m, n) {
    const site = window.atlasSite;
    const folder = `search/${m}/`;
    const get = async (name, Type, length) => {
      let response;
      try { response = await fetch(folder + name); } catch (error) { response = null; }
      if (!response || !response.ok) throw site.damaged(folder + name);
      if (!Type) { try { return await response.json(); } catch (error) { throw site.damaged(folder + name); } }
      const buffer = await response.arrayBuffer();
      if (length !== undefined && buffer.byteLength !== length * Type.BYTES_PER_ELEMENT) throw site.damaged(folder + name);
      return new Type(buffer);
    };
    const tokenizer = await get("tokenizer.json");
    const d = tokenizer.dimension, v = tokenizer.vocab.length;
    const [table, tableScales, rows, rowScales] = await Promise.all([
      get("table.i8", Int8Array, v * d), get("table-scales.f32", Float32Array, v),
      get("rows.i8", Int8Array, n * d), get("row-scales.f32", Float32Array, n)]);
    return { tokenizer, dimension: d, index: new Map(tokenizer.vocab.map((token, id) => [token, id])),
      table, tableScales, rows, rowScales, n };
  }

  function best(scores, top) {  // the ``top`` rows by score, best first (ties: the lower row)
    const rows = [];
    for (let i = 0; i < scores.length; i++) {
      if (rows.length < top || scores[i] > scores[rows[rows.length - 1]]) {
        let at = rows.length;
        while (at > 0 && scores[rows[at - 1]] < scores[i]) at -= 1;
        rows.splice(at, 0, i);
        if (rows.length > top) rows.pop();
      }
    }
    return rows;
  }

  window.atlasSearch = {
    tokenize: async (m, n, text) => tokenize(text, await model(m, n)),
    embed: async (m, n, text) => Array.from(embed(text, await model(m, n))),
    // the ``top`` sentences nearest ``text`` under model ``m``: [{row, score}], and the milliseconds it took
    async search(m, n, text, top = 10) {
      const found = await model(m, n);
      const started = performance.now();
      const query = embed(text, found), d = found.dimension, scores = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        let dot = 0;
        const base = i * d;
        for (let j = 0; j < d; j++) dot += found.rows[base + j] * query[j];
        scores[i] = dot * found.rowScales[i];
      }
      const rows = best(scores, top);
      return { rows: rows.map((row) => ({ row, score: scores[row] })), ms: performance.now() - started };
    },
  };

  function model(m, n) {
    if (!loaded.has(m)) {
      const promise = files(m, n);
      loaded.set(m, promise);
      promise.catch(() => loaded.delete(m));
    }
    return loaded.get(m);
  }
})();
