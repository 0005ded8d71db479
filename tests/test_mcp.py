"""The MCP server (``python app.py --mcp``): the app's tools listed with their descriptions and called with
the ``mcp`` client package against the running app; the numbers are checked against the app's own
functions, and a bad argument gets the page's sentence (slow: the run's app on the real models, started with
``--mcp`` in tests/conftest.py)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json

import numpy as np
import pytest
from conftest import raw_post

pytestmark = pytest.mark.slow
TOOLS = "compare_sentences,sts_spearman,available_models"


@pytest.fixture
def mcp_url(real_app) -> str:
    """The run's app on the real models, started with ``--mcp`` (tests/conftest.py)."""
    return f"{real_app.url}gradio_api/mcp/"


def answer_of(result):
    """A tool's answer: its text, which must be JSON (a Python literal with single quotes failed here)."""
    return json.loads(result.content[0].text)


def session(url: str, work):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async def run():
        async with streamable_http_client(url) as (reader, writer, _):
            async with ClientSession(reader, writer) as client:
                await client.initialize()
                return await work(client)

    # in a thread of its own: the run's one Chromium (Playwright's sync API) keeps an event loop in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result()


def test_the_tools_are_listed_with_what_they_do(mcp_url: str) -> None:
    async def listed(client):
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    everything = session(mcp_url, listed)
    assert {"compare_sentences", "sts_spearman", "available_models"} <= set(everything)
    chosen = session(f"{mcp_url}?tools={TOOLS}", listed)
    assert set(chosen) == set(TOOLS.split(","))
    compare = chosen["compare_sentences"]
    assert "cosine similarity per model" in compare.description
    properties = compare.inputSchema["properties"]
    assert set(properties) == {"sentences", "models"} and "one per line" in properties["sentences"]["description"]


def test_compare_sentences_and_sts_spearman_answer_the_right_numbers(mcp_url: str) -> None:
    from sbert_demo.encoding.encoder import encode

    sentences = ["A man is playing a guitar.", "Someone plays the guitar on stage.", "Stock markets fell sharply."]

    async def calls(client):
        compared = await client.call_tool("compare_sentences", {"sentences": "\n".join(sentences),
                                                                "models": "glove-6b-50d"})
        spearman = await client.call_tool("sts_spearman", {"models": "glove-6b-50d", "split": "test"})
        models = await client.call_tool("available_models", {})
        return answer_of(compared), answer_of(spearman), answer_of(models)

    compared, spearman, models = session(mcp_url, calls)
    assert {"key": "glove-6b-50d", "available": True}.items() <= next(m for m in models if m["key"] == "glove-6b-50d").items()
    assert all(round(value, 4) == value for row in compared["models"][0]["cosine"] for value in row)
    vectors = encode("glove-6b-50d", sentences, use_cache=False).embeddings
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.testing.assert_allclose(compared["models"][0]["cosine"], unit @ unit.T, atol=1e-4)
    assert compared["models"][0]["most_similar_pair"][:2] == [0, 1]
    assert spearman["pairs"] == 1379 and spearman["models"][0]["spearman"] == 55.60  # the library's exact value


@pytest.mark.parametrize("tool, arguments, sentence", [
    ("compare_sentences", {"sentences": "Only one.", "models": "glove-6b-50d"}, "Only one sentence was found"),
    ("compare_sentences", {"sentences": "A.\nB.", "models": "no-such-model"}, "no-such-model"),
    ("sts_spearman", {"models": "glove-6b-50d", "split": "train"}, "The split is 'dev' or 'test'"),
])
def test_bad_arguments_get_the_pages_sentences(mcp_url: str, tool: str, arguments: dict, sentence: str) -> None:
    async def call(client):
        return await client.call_tool(tool, arguments)

    answer = session(mcp_url, call)
    text = " ".join(getattr(part, "text", "") for part in answer.content)
    assert answer.isError and sentence in text and "Traceback" not in text, text



def test_hostile_bodies_to_the_running_apps_mcp_get_sentences_and_it_keeps_serving(mcp_url: str) -> None:
    """The launched app's MCP endpoint, behind BodyGuard: a JSON-RPC request nested 50,000 deep (an HTTP 500 from
    Gradio's MCP transport before), a body past 8 MB sent in chunks with no length, and one that declares it;
    each answered with a sentence, and a real MCP client is served afterwards."""
    from sbert_demo.ui.bodies import GUARDED_BYTES, MAX_DEPTH

    deep = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
    status, answer = raw_post(mcp_url, deep)
    assert status == 400 and f"nests deeper than {MAX_DEPTH} levels" in answer["error"], (status, answer)
    chunks = [b" " * (1 << 18)] * (GUARDED_BYTES // (1 << 18) + 8)  # 10 MB in pieces of 256 KB
    status, answer = raw_post(mcp_url, chunks)
    assert status == 413 and "larger than 8 MB" in answer["error"], (status, answer)
    status, answer = raw_post(mcp_url, b"{}", declared=50 * GUARDED_BYTES)
    assert status == 413 and "larger than 8 MB" in answer["error"], (status, answer)

    async def listed(client):
        return {tool.name for tool in (await client.list_tools()).tools}

    assert set(TOOLS.split(",")) <= session(mcp_url, listed)
