"""The course's memory benchmark (notebook 10, `python -m course_lib bench memory-eval`).

Synthetic Russian support customers over several sessions (`generate`, `dataset`), replayed through
every memory strategy of the course (`strategies`), then asked about their past (`harness`): was the
evidence in the request, was the answer right, did the strategy decline where nothing can be known,
and what did it cost. `report` prints the tables and writes the JSON record.
"""
