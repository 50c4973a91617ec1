def build_summary_source(previous_summary, messages):
    return "\ud800" * 10
