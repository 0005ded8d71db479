"""2-D projection and clustering on synthetic embeddings with known structure."""

from __future__ import annotations

import numpy as np
import pytest

from sbert_demo.explore.projection import UMAP_MIN_POINTS, auto_clusters, cluster_agreement, project_2d, warm_up


def blobs(n_per_blob: int = 10, dim: int = 16, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Three tight clusters in well-separated directions, and their true labels."""
    rng = np.random.default_rng(seed)
    centers = np.eye(dim)[:3] * 5
    points = np.vstack([c + rng.normal(scale=0.3, size=(n_per_blob, dim)) for c in centers])
    return points, np.repeat([0, 1, 2], n_per_blob)


@pytest.mark.parametrize("n", [3, 6, UMAP_MIN_POINTS - 1])
def test_few_points_use_pca_with_a_note(n):
    points, _ = blobs()
    projection = project_2d(points[:n])
    assert projection.method == "PCA" and UMAP_MIN_POINTS - 1 == 20
    assert projection.note == f"{n} sentences: PCA, as faithful as UMAP up to 20"
    assert projection.coords.shape == (n, 2) and np.isfinite(projection.coords).all()


@pytest.mark.parametrize("n", [0, 1, 2])
def test_fewer_than_three_points_raise(n):
    with pytest.raises(ValueError, match="at least 3 sentences"):
        project_2d(np.ones((n, 4)))


@pytest.mark.parametrize("n", [4, 12])
def test_identical_embeddings_sit_on_one_point(n):
    projection = project_2d(np.tile([0.2, -1.0, 3.0], (n, 1)))
    assert np.array_equal(projection.coords, np.zeros((n, 2)))
    assert "same embedding" in projection.note


def test_one_dimensional_embeddings_do_not_crash():
    projection = project_2d(np.array([[1.0], [-1.0], [2.0], [-3.0]]))
    assert projection.coords.shape == (4, 2)
    assert np.array_equal(projection.coords[:, 1], np.zeros(4))


def test_umap_is_deterministic_and_separates_blobs():
    points, truth = blobs()
    first, second = project_2d(points), project_2d(points)
    assert first.method == "UMAP" and first.note is None
    assert first.coords.shape == (30, 2)
    np.testing.assert_array_equal(first.coords, second.coords)
    # the map keeps the blobs apart: every point is closer to its own blob's centre
    centres = np.array([first.coords[truth == k].mean(axis=0) for k in range(3)])
    nearest = np.argmin(np.linalg.norm(first.coords[:, None] - centres[None], axis=2), axis=1)
    assert np.array_equal(nearest, truth)


def test_umap_copes_with_mostly_duplicate_points():
    points = np.ones((12, 5))
    points[0] = [1.0, 0.0, 0.0, 0.0, 0.0]
    projection = project_2d(points)
    assert projection.coords.shape == (12, 2) and np.isfinite(projection.coords).all()


def test_warm_up_runs():
    assert warm_up() is None


@pytest.mark.parametrize("method", ["kmeans", "hdbscan"])
def test_clustering_recovers_three_blobs(method):
    points, truth = blobs()
    clustering = auto_clusters(points, method=method)
    assert clustering.method == method and clustering.k == 3
    assert cluster_agreement(truth.astype(str), clustering.labels) == 1.0
    assert clustering.silhouette is not None and clustering.silhouette > 0.9


def test_kmeans_is_deterministic_and_respects_max_k():
    points, _ = blobs()
    first, second = auto_clusters(points), auto_clusters(points)
    np.testing.assert_array_equal(first.labels, second.labels)
    assert auto_clusters(points, max_k=2).k == 2


@pytest.mark.parametrize("method", ["kmeans", "hdbscan"])
@pytest.mark.parametrize("points", [np.zeros((0, 3)), np.ones((1, 3)), np.ones((2, 3)), np.ones((7, 3))])
def test_degenerate_inputs_give_one_cluster(method, points):
    clustering = auto_clusters(points, method=method)
    assert clustering.labels.tolist() == [0] * len(points)
    assert clustering.k == min(len(points), 1) and clustering.silhouette is None


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"method": "dbscan"}, "choose one of kmeans, hdbscan"),
    ({"max_k": 1}, "at least 2"),
])
def test_bad_options_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        auto_clusters(np.eye(4), **kwargs)


@pytest.mark.parametrize(
    ("groups", "labels", "expected"),
    [
        (["a", "a", "b", "b"], [1, 1, 0, 0], 1.0),
        (["a", "a", "b", "b"], [0, 0, 0, 0], 0.0),
        (["a", "b"], [0, 0], 0.0),
    ],
)
def test_cluster_agreement_known_values(groups, labels, expected):
    assert cluster_agreement(groups, labels) == pytest.approx(expected)


@pytest.mark.parametrize(("groups", "labels"), [([], []), (["a"], [0, 1])])
def test_cluster_agreement_rejects_bad_input(groups, labels):
    with pytest.raises(ValueError):
        cluster_agreement(groups, labels)


def _sentence_sets() -> list[np.ndarray]:
    """Unit vectors of real sentence sets (averaged GloVe, shipped): the example sets and 20-sentence
    slices of STSb dev, as Explore clusters them; and random sets of other sizes."""
    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.data.examples import EXAMPLE_SETS
    from sbert_demo.data.sentences import parse_sentences
    from sbert_demo.encoding.encoder import encode
    from sbert_demo.explore.similarity import normalize_rows

    dev = sts_split("dev")
    texts = list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))
    sets = [parse_sentences(example.text).sentences for example in EXAMPLE_SETS.values()]
    sets += [texts[start:start + 20] for start in range(0, 400, 20)]
    vectors = [normalize_rows(encode("glove-6b-50d", sentences).embeddings) for sentences in sets]
    rng = np.random.default_rng(1)
    return vectors + [normalize_rows(rng.normal(size=(n, 12))) for n in (4, 9, 33, 57)]


def test_small_kmeans_gives_scikit_learns_labels_and_silhouettes() -> None:
    """All restarts at once (small_kmeans) against KMeans(n_init=10, random_state=42) itself, for every
    k Explore tries, and the silhouette against silhouette_score on the same distances."""
    from sklearn.cluster import KMeans
    from sklearn.metrics import silhouette_score

    from sbert_demo.explore import small_kmeans

    compared = same = 0
    for unit in _sentence_sets():
        distances = np.clip(1 - unit @ unit.T, 0, 2)
        np.fill_diagonal(distances, 0)
        for k in range(2, min(10, len(unit) - 1) + 1):
            expected = KMeans(n_clusters=k, n_init=10, random_state=42).fit_predict(unit)
            try:
                labels = small_kmeans.kmeans(unit, k)
            except small_kmeans.EmptyCluster:  # the caller falls back to KMeans: nothing to compare
                continue
            compared += 1
            same += bool((labels == expected).all())
            if len(set(expected)) > 1:
                assert small_kmeans.silhouette(distances, expected) == pytest.approx(
                    silhouette_score(distances, expected, metric="precomputed"), abs=1e-12)
    assert compared > 200 and same >= compared - 2  # only exact floating-point ties may differ


def test_small_kmeans_knows_which_partitions_are_the_same() -> None:
    from sbert_demo.explore.small_kmeans import _same_partition

    assert _same_partition(np.array([0, 0, 1, 2]), np.array([2, 2, 0, 1]), 3)
    assert not _same_partition(np.array([0, 0, 1, 2]), np.array([2, 1, 0, 1]), 3)


def test_pca_keeps_small_sets_neighbours_as_faithfully_as_umap_and_umap_wins_above() -> None:
    """Why maps of up to 20 sentences are PCA: on 20-sentence sets (STSb dev slices, MiniLM and GloVe)
    PCA's trustworthiness is UMAP's or better on average, on 30-sentence sets UMAP's is clearly better."""
    from sklearn.decomposition import PCA
    from sklearn.manifold import trustworthiness

    from sbert_demo.data.benchmarks import sts_split
    from sbert_demo.encoding.encoder import encode
    from sbert_demo.explore.projection import umap_2d
    from sbert_demo.explore.similarity import normalize_rows

    dev = sts_split("dev")
    texts = list(dict.fromkeys([*dev.sentences1, *dev.sentences2]))

    def mean_trust(size: int) -> tuple[float, float]:
        sets = [normalize_rows(encode(model, texts[i:i + size]).embeddings)
                for model in ("glove-6b-50d", "all-MiniLM-L6-v2") for i in range(0, 8 * size, size)]
        pca = [trustworthiness(u, PCA(2, svd_solver="full").fit_transform(u), n_neighbors=5, metric="cosine")
               for u in sets]
        umap = [trustworthiness(u, umap_2d(u, 42), n_neighbors=5, metric="cosine") for u in sets]
        return float(np.mean(pca)), float(np.mean(umap))

    pca, umap = mean_trust(20)
    assert pca >= umap - 0.01, (pca, umap)
    pca, umap = mean_trust(30)
    assert umap > pca + 0.02, (pca, umap)
