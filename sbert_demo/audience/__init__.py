"""Audience boards: the room's own sentences, sent from phones, on the presenter's map.

* :mod:`.store` — boards and sentences in SQLite (WAL) in the cache folder: the limits (length,
  rate, size, duplicates), the presenter's secret, removal of old boards; nothing is lost when the
  app restarts;
* :mod:`.board` — what a board shows under one model: the map, named clusters, the latest
  sentences' similarities, the closest pair, and where one sentence landed;
* :mod:`.qr` — a QR code of a link, drawn offline (segno), as an SVG image.

May import: config, shared, views, formatting, plot_style, models, data, encoding, explore, gpu.
"""
