"""Publishing for free: a corpus map as a static folder any web server (a free Static Space, GitHub Pages,
``python -m http.server``) serves, with no Python behind it.

* :mod:`.site` writes the folder: the map's own folder copied as it is (the app serves the same files), the
  map view's page beside it (the same files as the app's), its title and links;
* :mod:`.search` adds search by meaning in the page, with a static model of the map (its tokenizer and token
  table) or MiniLM (the app's ONNX int8 graph in ONNX Runtime Web), over the corpus's sign bits and int8 rows;
* :mod:`.talk` adds the talk: the presenter view's steps drawn once, a page that steps through them;
* :mod:`.vendor` brings what the pages run that this project did not write (ONNX Runtime Web, a QR code
  generator, plotly.js) into the folder: nothing is loaded from anywhere else;
* :mod:`.folder` keeps the folder the user's: publish moves its files in, lists them, and replaces only
  those the next time (a stranger's folder is refused);
* :mod:`.packing` gzips the large files a page fetches whole (ONNX Runtime Web's WebAssembly, MiniLM's
  graph); the page unpacks them.

The pages' own files are the map view's (:mod:`sbert_demo.atlas.page`) and the talk's (``publish/assets/talk_site*``),
copied as they are.

May import: config, shared, views, formatting, plot_style, hub, gpu, models, data, encoding, explore, benchmark, analysis, training, audience, talk, corpus, atlas.
"""
