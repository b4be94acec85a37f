"""The turn loop (sans-I/O) and its two drivers, with limits, retries and stream control."""
