// Search by meaning in a published map (sbert_demo/publish/search.py): the query embedded in this page,
// by a static model of the map (BERT's WordPiece tokenizer, then the sum of the tokens' rows in the model's
// table, normalised: the same vectors as Python's within cosine 0.9999) or by a small transformer (the
// app's ONNX int8 graph run by ONNX Runtime Web from the folder's vendor/, wasm, given the rows of the query's
// tokens from its word table, fetched by chunk); then the corpus searched
// in two passes: every sentence's signs (1 bit a dimension) against the query, and the best CANDIDATES
// scored again, fetched by chunk: a transformer's int8 rows, a static model's token ids (embedded here as
// the query is). The files come with the first query, never before.
"use strict";
(() => {
  const loaded = new Map(), corpora = new Map();  // per model: what embeds a query; with the corpus's signs

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

  const CANDIDATES = 100, ROWS_CHUNK = 64;  // sbert_demo/publish/search.py
  // a chunk's file: at most ``per_folder`` files a folder (tokenizer.json; publish/search.py's chunk_name)
  const chunkFile = (model, kind, chunk, suffix) =>
    `${kind}/${Math.floor(chunk / (model.tokenizer.per_folder || 1000))}/${chunk}${suffix}`;

  function tokenize(text, model) {  // token ids; a transformer's wrapped in its special tokens and cut to its limit
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
    if (model.engine !== "graph") return ids;
    return [spec.cls, ...ids.slice(0, spec.max_tokens - 2), spec.sep];
  }

  function normalised(vector) {
    let norm = 0;
    for (let j = 0; j < vector.length; j++) norm += vector[j] * vector[j];
    norm = Math.sqrt(norm);
    if (norm > 0) for (let j = 0; j < vector.length; j++) vector[j] /= norm;
    return vector;
  }

  function embedIds(ids, model) {  // a static model: the normalised sum of the tokens' rows
    const d = model.dimension, vector = new Float32Array(d);
    for (const id of ids) {
      const scale = model.tableScales[id], base = id * d;
      for (let j = 0; j < d; j++) vector[j] += model.table[base + j] * scale;
    }
    return normalised(vector);
  }

  async function embed(text, model) {  // the query's unit-length vector (zeros when a static model knows no token)
    const ids = tokenize(text, model);
    if (model.engine === "graph") {
      const ort = window.ort, shape = [1, ids.length], feeds = {};
      let local = ids;
      if (model.tokenizer.word_input) {  // the graph's word table: the rows of these tokens, the ids renumbered
        const spec = model.tokenizer, unique = Array.from(new Set(ids)).sort((a, b) => a - b);
        const at = new Map(unique.map((id, i) => [id, i]));
        feeds[spec.word_input] = new ort.Tensor("float32", await wordRows(model, unique), [unique.length, spec.word_dimension]);
        local = ids.map((id) => at.get(id));
      }
      feeds.input_ids = new ort.Tensor("int64", BigInt64Array.from(local, BigInt), shape);
      feeds.attention_mask = new ort.Tensor("int64", new BigInt64Array(ids.length).fill(1n), shape);
      const output = await model.session.run(feeds);
      return normalised(Float32Array.from(output[model.session.outputNames[0]].data));
    }
    return embedIds(ids, model);
  }

  async function byChunk(rows, fetchChunk) {  // the chunks (ROWS_CHUNK rows a file) that hold ``rows``, by number
    const chunks = new Map();
    await Promise.all(Array.from(new Set(Array.from(rows, (row) => Math.floor(row / ROWS_CHUNK))),
      async (chunk) => chunks.set(chunk, await fetchChunk(chunk))));
    return chunks;
  }

  async function wordRows(model, ids) {  // the word table's rows of ``ids`` (sorted), dequantised as the graph did
    const spec = model.tokenizer, d = spec.word_dimension, table = new Float32Array(ids.length * d);
    const chunks = await byChunk(ids, (chunk) => window.atlasSource.once(model.words, chunk, () => model.get(
      chunkFile(model, "words", chunk, ".i8"), Int8Array, Math.min(ROWS_CHUNK, spec.words - chunk * ROWS_CHUNK) * d)));
    ids.forEach((id, i) => {
      const rows = chunks.get(Math.floor(id / ROWS_CHUNK)), base = (id % ROWS_CHUNK) * d, scale = model.wordScales[id];
      for (let j = 0; j < d; j++) table[i * d + j] = rows[base + j] * scale;
    });
    return table;
  }

  function runtime() {  // ONNX Runtime Web from the folder (vendor/), loaded with the first transformer query
    if (!runtime.loading) {
      runtime.loading = new Promise((resolve, reject) => {
        const script = document.createElement("script");
        script.src = "vendor/ort.wasm.min.js";
        script.onload = async () => {
          const ort = window.ort, name = "vendor/ort-wasm-simd-threaded.wasm.gz";
          ort.env.wasm.wasmPaths = new URL("vendor/", location.href).href;
          // threads need cross-origin isolation (SharedArrayBuffer); a plain static host runs one
          ort.env.wasm.numThreads = self.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
          try {  // its WebAssembly, kept gzipped in the folder (3.7 MB instead of 14.2)
            const response = await fetch(name);
            if (!response.ok) throw new Error(name);
            ort.env.wasm.wasmBinary = await window.atlasSource.gunzipped(await response.arrayBuffer());
          } catch (error) { reject(window.atlasSource.damaged(name)); return; }
          resolve(ort);
        };
        script.onerror = () => reject(window.atlasSource.damaged("vendor/ort.wasm.min.js"));
        document.head.append(script);
      });
      runtime.loading.catch(() => { runtime.loading = null; });
    }
    return runtime.loading;
  }

  async function files(m) {  // what embeds a query with model m (the corpus's vectors come with the first search)
    const site = window.atlasSource;
    const folder = `search/${m}/`;
    const get = async (name, Type, length) => {
      let response;
      try { response = await fetch(folder + name); } catch (error) { response = null; }
      if (!response || !response.ok) throw site.damaged(folder + name);
      if (!Type) { try { return await response.json(); } catch (error) { throw site.damaged(folder + name); } }
      const buffer = await response.arrayBuffer();
      if (Type === ArrayBuffer) return buffer;
      if (length !== undefined && buffer.byteLength !== length * Type.BYTES_PER_ELEMENT) throw site.damaged(folder + name);
      return new Type(buffer);
    };
    const tokenizer = await get("tokenizer.json");
    const d = tokenizer.dimension, v = tokenizer.vocab.length, bytes = Math.ceil(d / 8);
    const found = { tokenizer, engine: tokenizer.engine, dimension: d, bytes, folder, get, chunks: new Map(),
      words: new Map(), index: new Map(tokenizer.vocab.map((token, id) => [token, id])) };
    if (found.engine === "graph") {
      const ort = await runtime();
      if (tokenizer.word_input) found.wordScales = await get("word-scales.f32", Float32Array, tokenizer.words);
      const graph = await get("model.onnx.gz", ArrayBuffer);
      try {
        found.session = await ort.InferenceSession.create(new Uint8Array(await site.gunzipped(graph)),
          { executionProviders: ["wasm"] });
      } catch (error) { throw site.damaged(folder + "model.onnx.gz"); }
    } else {
      [found.table, found.tableScales] = await Promise.all([
        get("table.i8", Int8Array, v * d), get("table-scales.f32", Float32Array, v)]);
    }
    return found;
  }

  function corpus(m, n) {  // model m with the corpus's signs, fetched once
    return window.atlasSource.once(corpora, m, async () => {
      const found = await model(m);
      const bits = await found.get("bits.u8", Uint8Array, n * found.bytes);
      return Object.assign(found, { bits, n });
    });
  }

  async function tokens(model, chunk, count) {  // a static model's chunk: each sentence's token ids
    const name = chunkFile(model, "tokens", chunk, ".u16"), buffer = await model.get(name, ArrayBuffer);
    const head = (count + 1) * 4;
    if (buffer.byteLength < head) throw window.atlasSource.damaged(model.folder + name);
    const offsets = new Uint32Array(buffer, 0, count + 1);
    if (offsets[0] !== 0 || head + offsets[count] * 2 !== buffer.byteLength) throw window.atlasSource.damaged(model.folder + name);
    const ids = new Uint16Array(buffer, head, offsets[count]);
    return Array.from({ length: count }, (_, i) => ids.subarray(offsets[i], offsets[i + 1]));
  }

  function chunkOf(model, chunk) {  // what the candidates of one chunk are rescored with, fetched once
    const count = Math.min(ROWS_CHUNK, model.n - chunk * ROWS_CHUNK);
    return window.atlasSource.once(model.chunks, chunk, () => (model.engine === "graph"
      ? model.get(chunkFile(model, "rows", chunk, ".i8"), Int8Array, count * model.dimension)
      : tokens(model, chunk, count)));
  }

  function rescore(model, chunk, row, query) {  // a candidate's cosine: its int8 row, or its tokens embedded
    const d = model.dimension;
    let dot = 0;
    if (model.engine === "graph") {
      const base = (row % ROWS_CHUNK) * d;
      let norm = 0;
      for (let j = 0; j < d; j++) {
        dot += chunk[base + j] * query[j];
        norm += chunk[base + j] * chunk[base + j];
      }
      return norm > 0 ? dot / Math.sqrt(norm) : 0;
    }
    const vector = embedIds(chunk[row % ROWS_CHUNK], model);
    for (let j = 0; j < d; j++) dot += vector[j] * query[j];
    return dot;
  }

  function best(scores, top, rowOf = (i) => i) {  // the ``top`` positions by score, best first (ties: the lower row)
    const found = [];
    for (let i = 0; i < scores.length; i++) {
      const last = found[found.length - 1];
      if (found.length < top || scores[i] > scores[last] || (scores[i] === scores[last] && rowOf(i) < rowOf(last))) {
        let at = found.length;
        while (at > 0 && (scores[found[at - 1]] < scores[i]
          || (scores[found[at - 1]] === scores[i] && rowOf(found[at - 1]) > rowOf(i)))) at -= 1;
        found.splice(at, 0, i);
        if (found.length > top) found.pop();
      }
    }
    return found;
  }

  async function nearest(model, query, top) {
    // first pass: the query against every sentence's signs, eight dimensions a byte through a table of sums
    const { bits, bytes, n, dimension: d } = model, sums = new Float32Array(bytes * 256);
    for (let k = 0; k < bytes; k++) {
      for (let b = 0; b < 256; b++) {
        let sum = 0;
        for (let t = 0; t < 8 && 8 * k + t < d; t++) if (b & (128 >> t)) sum += query[8 * k + t];
        sums[k * 256 + b] = sum;
      }
    }
    const first = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let score = 0;
      const base = i * bytes;
      for (let k = 0; k < bytes; k++) score += sums[k * 256 + bits[base + k]];
      first[i] = score;
    }
    const candidates = best(first, Math.min(CANDIDATES, n)).sort((a, b) => a - b);
    // second pass: the candidates scored again from their chunks (int8 rows, or a static model's tokens)
    const chunks = await byChunk(candidates, (chunk) => chunkOf(model, chunk));
    const scores = new Float32Array(candidates.length);
    candidates.forEach((row, c) => { scores[c] = rescore(model, chunks.get(Math.floor(row / ROWS_CHUNK)), row, query); });
    return best(scores, top, (c) => candidates[c]).map((c) => ({ row: candidates[c], score: scores[c] }));
  }

  window.atlasSearch = {
    tokenize: async (m, n, text) => tokenize(text, await model(m)),
    embed: async (m, n, text) => Array.from(await embed(text, await model(m))),
    // the ``top`` sentences nearest ``text`` under model ``m``: [{row, score}], and the milliseconds it took
    // (the files fetched with the first query not counted; the chunks a query rescores with counted)
    async search(m, n, text, top = 10) {
      const found = await corpus(m, n);
      const started = performance.now();
      const query = await embed(text, found);
      const rows = await nearest(found, query, top);
      return { rows, ms: performance.now() - started };
    },
  };

  function model(m) { return window.atlasSource.once(loaded, m, () => files(m)); }
})();
