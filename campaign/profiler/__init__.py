"""The payload profiler: a recording proxy, its capture file, and an offline tokenizer."""
