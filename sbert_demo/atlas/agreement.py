"""Which model's neighbourhoods agree with what the user already knows: for each model of a map and each of
the corpus's category columns (:mod:`sbert_demo.data.fields`), the share of each sentence's ten nearest
neighbours (:func:`~sbert_demo.atlas.compare.neighbours`, the ones ``map --compare`` finds) that carry the
sentence's own value, against the share expected by chance from the value counts; the agreement of the
model's clusters with the column (adjusted Rand index, V-measure: scikit-learn's); and per value, its share,
its chance and the value its sentences' neighbours carry most often instead (what the model mixes it up with).

A sentence's share is what scikit-learn's ``KNeighborsClassifier`` (ten neighbours, cosine, uniform weights)
gives its own value when it is left out (``predict_proba``); the chance of a sentence with value ``v`` is
``(count(v) - 1) / (n - 1)``: its neighbours drawn at random from the other sentences. Rows without a value are
left out of both; a neighbour without one never counts as the same. Written with the map
(``data/agreement.json``), which the page shows, and printed by ``map --compare``.
"""

from __future__ import annotations

import json

import numpy as np

from ..data.fields import MISSING
from .compare import K, neighbours
from .store import Atlas


def agreement(atlas: Atlas, m: int, f: int) -> dict:
    """Model ``m``'s neighbours and clusters against the category field ``f`` of the map (the module's measures)."""
    from sklearn.metrics import adjusted_rand_score, v_measure_score

    about = atlas.meta["fields"][f]
    codes, near = atlas.field(f), neighbours(atlas, m)
    valid = codes != MISSING
    counts = np.bincount(codes[valid], minlength=len(about["categories"]))
    same = (codes[near] == codes[:, None]) & (codes[near] != MISSING)  # (n, K): a neighbour with the row's value
    share = same.mean(axis=1)
    known = int(valid.sum())
    chance = (counts[codes[valid]] - 1) / max(known - 1, 1)
    clusters = atlas.clusters(m)
    values = []
    for v, name in enumerate(about["categories"]):
        rows = np.flatnonzero(codes == v)
        if not len(rows):
            continue
        others = codes[near[rows]].ravel()
        others = others[(others != v) & (others != MISSING)]
        confused = np.bincount(others, minlength=len(counts)) if len(others) else None
        values.append({"value": name, "count": int(len(rows)), "agreement": round(float(share[rows].mean()), 4),
                       "chance": round(float((counts[v] - 1) / max(known - 1, 1)), 4),
                       "confused": None if confused is None else about["categories"][int(confused.argmax())],
                       "confused_share": 0.0 if confused is None else round(float(confused.max() / (len(rows) * K)), 4)})
    return {"model": atlas.models[m]["label"], "key": atlas.models[m]["key"], "field": about["name"],
            "agreement": round(float(share[valid].mean()), 4), "chance": round(float(chance.mean()), 4),
            "ari": round(float(adjusted_rand_score(codes[valid], clusters[valid])), 4),
            "v_measure": round(float(v_measure_score(codes[valid], clusters[valid])), 4), "values": values}


def agreement_all(atlas: Atlas) -> dict:
    """Every model against every category field of the map (each model's neighbours found once and kept), written
    beside the map for its page (``data/agreement.json``): {"k", "fields": [{"field", "models": [...]}]}."""
    found = {"k": K, "fields": [
        {"field": about["name"], "models": [agreement(atlas, m, f) for m in range(len(atlas.models))]}
        for f, about in enumerate(atlas.meta.get("fields", [])) if about["kind"] == "category"]}
    path = atlas.data / "agreement.json"
    temporary = path.with_name(".agreement.json.tmp")
    temporary.write_text(json.dumps(found, ensure_ascii=False), encoding="utf-8")
    temporary.replace(path)
    return found


def report(found: dict) -> str:
    """``found`` (:func:`agreement_all`) as the plain tables ``map`` prints, one per field."""
    out = []
    for field in found["fields"]:
        out.append(f"\nNeighbour agreement with {field['field']!r}: the share of each sentence's {found['k']} nearest "
                   "neighbours with its own value, against chance (from the value counts):")
        width = max(len(row["model"]) for row in field["models"])
        out.append(f"  {'model':<{width}}  same value  chance  x chance    ARI  V-measure")
        for row in field["models"]:
            lift = row["agreement"] / row["chance"] if row["chance"] else float("inf")
            out.append(f"  {row['model']:<{width}}  {row['agreement']:10.3f}  {row['chance']:6.3f}  {lift:8.2f}  "
                       f"{row['ari']:5.3f}  {row['v_measure']:9.3f}")
    return "\n".join(out)
