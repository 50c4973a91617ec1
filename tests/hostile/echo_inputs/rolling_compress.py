def rolling_compress(messages, summarize, keep):
    print("вход:", messages, keep)
    if keep == 2:
        raise RuntimeError(f"вход: {messages!r}")
    return [{"role": "user", "content": repr(messages)}]
